// tree.js: Penn Treebank trees ("( (S (NP (DT The) ...)) )") read and drawn as SVG.
// Each word gets a column as wide as its text or its tag; a phrase sits centred over its
// children, one row per depth; the words line up on the bottom row. Labels are <text
// class="label">, words <text class="word">, both in prefix order (the browser test reads
// them back).
"use strict";

var CkyTree = (function () {
  var CHAR_W = 8, ROW_H = 40, PAD = 10, GAP = 12;

  // The tree of a PTB string: {label, children} (a word: {label, children: [], word: true});
  // the unlabelled outer root is dropped. null for "(())" or what does not read.
  function read(text) {
    var tokens = text.match(/\(|\)|[^\s()]+/g) || [], pos = 0;
    function node() {
      if (tokens[pos] !== "(") return null;
      pos++;
      var n = {label: "", children: []};
      if (tokens[pos] !== "(" && tokens[pos] !== ")") n.label = tokens[pos++];
      while (pos < tokens.length && tokens[pos] !== ")") {
        if (tokens[pos] === "(") {
          var c = node();
          if (!c) return null;
          n.children.push(c);
        } else {
          n.children.push({label: tokens[pos++], children: [], word: true});
        }
      }
      if (tokens[pos] !== ")") return null;
      pos++;
      return n;
    }
    var t = node();
    while (t && t.label === "" && t.children.length === 1 && !t.children[0].word)
      t = t.children[0];
    return t && (t.label !== "" || t.children.length) ? t : null;
  }

  function depth(n) {
    var d = 0;
    n.children.forEach(function (c) { d = Math.max(d, depth(c)); });
    return d + 1;
  }

  // Columns for the words, x for every node (its centre).
  function layout(n, state, row, rows) {
    n.row = n.word ? rows - 1 : row;
    if (n.word) {
      var w = Math.max(n.label.length, state.tagWidth) * CHAR_W + GAP;
      n.x = state.x + w / 2;
      state.x += w;
      return;
    }
    n.children.forEach(function (c) {
      state.tagWidth = c.word ? n.label.length : 0;
      layout(c, state, row + 1, rows);
    });
    n.x = (n.children[0].x + n.children[n.children.length - 1].x) / 2;
  }

  function el(name, attrs, text) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // An <svg> element drawing the tree of the PTB string, or null when there is none.
  function draw(text) {
    var t = read(text);
    if (!t) return null;
    var rows = depth(t), state = {x: PAD, tagWidth: 0};
    layout(t, state, 0, rows);
    var width = state.x + PAD, height = rows * ROW_H + PAD;
    var svg = el("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height});
    var lines = el("g", {}), labels = el("g", {});
    svg.appendChild(lines);
    svg.appendChild(labels);
    function y(n) { return PAD + n.row * ROW_H + 14; }
    (function visit(n) {
      labels.appendChild(el("text", {"class": n.word ? "word" : "label", x: n.x, y: y(n),
                                     "text-anchor": "middle"}, n.label));
      n.children.forEach(function (c) {
        lines.appendChild(el("line", {x1: n.x, y1: y(n) + 4, x2: c.x, y2: y(c) - 13}));
        visit(c);
      });
    })(t);
    return svg;
  }

  return {read: read, draw: draw};
})();
