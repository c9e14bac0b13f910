// app.js: the page's behaviour. The text goes to POST / (CoreNLP's raw-text request, one
// sentence per line, JSON reply); each sentence comes back as a tree drawn by tree.js, its
// scores, its PTB text, or the reason it has no tree. A service started with --token-file
// answers 401: the page then asks for the token and sends it as a Bearer token.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };

  function show(status, isError) {
    $("status").textContent = status;
    $("status").className = isError ? "error" : "";
  }

  function fmt(x) { return x === null || x === undefined ? "-inf" : x.toFixed(4); }

  function render(reply) {
    var out = $("results");
    out.textContent = "";
    $("info").textContent = "grammar " + reply.grammar + ", decoder " + reply.decoder +
      ", engine " + reply.engine + ", " + reply.mode;
    reply.sentences.forEach(function (s) {
      var div = document.createElement("div");
      div.className = "sentence";
      var scores = document.createElement("div");
      scores.className = "scores";
      scores.textContent = "sentence " + (s.index + 1) + ": score " + fmt(s.score) +
        (s.logLikelihood !== undefined ? ", log P(sentence) " + fmt(s.logLikelihood) : "");
      div.appendChild(scores);
      var svg = s.error ? null : CkyTree.draw(s.parse);
      if (svg) div.appendChild(svg);
      var p = document.createElement("div");
      p.className = s.error ? "error" : "ptb";
      p.textContent = s.error ? s.error : s.parse;
      div.appendChild(p);
      out.appendChild(div);
    });
    show(reply.sentences.length + " sentence" + (reply.sentences.length === 1 ? "" : "s"));
  }

  function parse() {
    var xhr = new XMLHttpRequest();
    xhr.open("POST", "/?properties=" + encodeURIComponent('{"outputFormat":"json"}'));
    xhr.setRequestHeader("Content-Type", "text/plain; charset=utf-8");
    var token = $("token").value;
    if (token) xhr.setRequestHeader("Authorization", "Bearer " + token);
    xhr.onload = function () {
      var reply = null;
      try { reply = JSON.parse(xhr.responseText); } catch (e) { reply = null; }
      if (xhr.status === 401) $("token-box").style.display = "block";
      if (xhr.status !== 200 || !reply || !reply.sentences) {
        show("error " + xhr.status + ": " + (reply && reply.error ? reply.error :
                                              xhr.responseText), true);
        return;
      }
      render(reply);
    };
    xhr.onerror = function () { show("the service cannot be reached", true); };
    show("parsing ...");
    xhr.send($("text").value);
  }

  $("parse").addEventListener("click", parse);
  $("text").addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) parse();
  });
})();
