"""Tests of `cky serve` (serve/, cli/serve.c) through the Python client (cky.Client) and raw
HTTP: the same trees and scores as `cky parse`, the tokens' offsets, every refusal with its
status and message, the token, the queue and time limits, draining on SIGTERM, and the small
versions of the load test and the fuzzer (tools/serve-load, tools/serve-fuzz; their long
versions are `make check-serve`)."""
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

import cky

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "tools")
sys.path.insert(0, TOOLS)
from serve_harness import Server  # noqa: E402

RAW = ["The company said it expects full vindication in court.",
       '"I don\'t know," he said (again).',
       "Shares of Acme Inc. rose 5% to $12.50 in the U.S.",
       "It\u2019s a caf\u00e9 \u2014 isn\u2019t it?"]
LONG = " ".join(["The company said it expects full vindication in court ,"] * 19) + " ."


@pytest.fixture(scope="module")
def text_grammar(shared):
    """The text export of the smallest grammar: Viterbi, as in the load test."""
    return os.path.join(shared, "grammars", "sample-sm1", "sample-sm1")


@pytest.fixture(scope="module")
def cky_exe(repo):
    exe = os.path.join(repo, "build", "cky")
    if not os.access(exe, os.X_OK):
        pytest.fail("build/cky is missing: run make first")
    return exe


@pytest.fixture(scope="module")
def server(cky_exe, text_grammar):
    with Server(cky_exe, text_grammar, "--engine", "cpu", "--threads", "2") as s:
        yield s


@pytest.fixture(scope="module")
def strict(cky_exe, text_grammar, tmp_path_factory):
    """A service with small limits and a token."""
    token = tmp_path_factory.mktemp("token") / "token"
    token.write_text("s3cret\n")
    token.chmod(0o600)
    with Server(cky_exe, text_grammar, "--engine", "cpu", "--batch", "1", "--queue", "4",
                "--max-sentences", "5", "--max-request-bytes", "20000",
                "--max-sentence-bytes", "2000", "--timeout", "1",
                "--token-file", str(token)) as s:
        yield s


def cky_parse(exe, grammar, lines, *options):
    out = subprocess.run([exe, "parse", "-g", grammar, "--engine", "cpu", *options],
                         input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout
    return out.splitlines()


def post(server, path, body, headers=None):
    """(status, headers, body) of a POST on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        conn.request("POST", path, body if isinstance(body, bytes) else body.encode(),
                     headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def error_of(server, path, body, headers=None):
    status, _, data = post(server, path, body, headers)
    reply = json.loads(data)
    assert reply["status"] == status
    assert reply["grammar"] == "sample-sm1" and reply["mode"] == "exhaustive"
    return status, reply["error"]


def test_trees_as_cky_parse(server, cky_exe, text_grammar):
    c = cky.Client(server.url)
    assert [c.parse(s) for s in RAW] == cky_parse(cky_exe, text_grammar, RAW, "--tokenize")
    tokenized = [" ".join(cky.tokenize(s)) for s in RAW]
    want = cky_parse(cky_exe, text_grammar, tokenized)
    assert [c.parse(s.split()) for s in tokenized] == want
    got = list(c.parse_many([s.split() for s in tokenized] * 3, batch_size=2))
    assert got == want * 3
    reply = c.request(tokenized, tokenized=True)
    assert [s["parse"] for s in reply["sentences"]] == want
    assert (reply["grammar"], reply["decoder"], reply["engine"], reply["mode"]) == \
        ("sample-sm1", "viterbi", "cpu", "exhaustive")


def test_scores_as_cky_parse(server, cky_exe, text_grammar):
    lines = ["Stocks fell .", "Prices rose sharply on Friday .", ""]
    want = cky_parse(cky_exe, text_grammar, lines, "--score")
    reply = cky.Client(server.url).request(lines, tokenized=True, scores=True)
    for s, line in zip(reply["sentences"], want):
        score, tree = line.split("\t")
        assert s["parse"] == tree
        assert (s["score"] if s["score"] is not None else float("-inf")) == float(score)
    assert reply["sentences"][2]["error"] == "empty sentence"
    assert "score" not in cky.Client(server.url).request(lines[:1], scores=False)["sentences"][0]


def test_raw_text_offsets(server):
    text = "\n" + "\n\n".join(RAW) + "\r\n"
    reply = cky.Client(server.url).annotate(text)
    assert [s["index"] for s in reply["sentences"]] == list(range(len(RAW)))  # blanks skipped
    for s, raw in zip(reply["sentences"], RAW):
        assert [t["word"] for t in s["tokens"]] == cky.tokenize(raw)
        for t in s["tokens"]:
            b, e = t["characterOffsetBegin"], t["characterOffsetEnd"]
            assert text[b:e] == t["originalText"], t
            assert b < e or t["word"] == "."  # the extra period of a final "U.S."
    words = {t["word"]: t["originalText"] for s in reply["sentences"] for t in s["tokens"]}
    assert words["``"] == '"' and words["''"] == '"' and words["-LRB-"] == "("
    assert words["'s"] == "\u2019s" and words["n't"] == "n\u2019t"
    assert words["--"] == "\u2014" and words["caf\u00e9"] == "caf\u00e9"


def test_text_output(server, cky_exe, text_grammar):
    text = cky.Client(server.url).annotate("\n".join(RAW), output_format="text")
    assert text.splitlines() == cky_parse(cky_exe, text_grammar, RAW, "--tokenize")
    props = urllib.parse.quote(json.dumps({"outputFormat": "text",
                                           "tokenize.whitespace": True}))
    status, headers, data = post(server, "/?properties=" + props, "( a ) b .\n")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert headers["X-Cky-Grammar"] == "sample-sm1" and headers["X-Cky-Decoder"] == "viterbi"
    assert data.decode().splitlines() == cky_parse(cky_exe, text_grammar, ["( a ) b ."])


def test_refusals_name_the_problem(server):
    assert error_of(server, "/parse", '{"sentences": [1,}') == \
        (400, "malformed JSON: line 1, column 18: unexpected token near '}'")
    status, why = error_of(server, "/parse", b'{"sentences": ["a \xff b"]}')
    assert status == 400 and "unable to decode byte 0xff" in why
    assert error_of(server, "/", b"The cat \xc3\x28 sat.") == \
        (400, "the text is not valid UTF-8: byte 0xc3 at offset 8")
    assert error_of(server, "/", b"a\0b") == (400, "the text holds a NUL byte at offset 1")
    status, why = error_of(server, "/parse", '{"sentences": ["a"], "kbest": 5}')
    assert status == 400 and "kbest 5" in why and "Viterbi decoder has none" in why
    assert post(server, "/parse", '{"sentences": ["a"], "kbest": 1}')[0] == 200
    assert error_of(server, "/parse", '{"sentence": []}')[1].startswith('unknown field "sentence"')
    assert error_of(server, "/parse", '{"sentences": [["a b"]]}') == \
        (400, "sentences[0][0]: a token must not hold white space")
    assert error_of(server, "/parse", '{"sentences": "a"}')[0] == 400
    assert error_of(server, "/parse", '{"sentences": [], "tokenized": 1}') == \
        (400, '"tokenized" must be true or false')
    props = urllib.parse.quote('{"outputFormat": "xml"}')
    assert error_of(server, "/?properties=" + props, "a") == \
        (400, "properties: outputFormat xml: known are json and text")
    assert error_of(server, "/nothing", "")[0] == 404
    status, headers, _ = post(server, "/stats", "")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert cky.Client(server.url).request([])["sentences"] == []


def test_limits(strict):
    auth = {"Authorization": "Bearer s3cret"}
    assert error_of(strict, "/", "a .\n" * 6, auth) == \
        (413, "more than 5 sentences (lines) in one request")
    assert error_of(strict, "/parse", json.dumps({"sentences": ["a"] * 6}), auth) == \
        (413, "6 sentences, more than the limit of 5 per request")
    assert error_of(strict, "/parse", json.dumps({"sentences": ["a " * 1001]}), auth) == \
        (413, "sentences[0]: 2002 bytes, more than the limit of 2000 bytes per sentence")
    status, why = error_of(strict, "/", "a" * 30000, auth)
    assert status == 413 and "more than the limit of 20000" in why
    # a body without Content-Length (chunked) beyond the limit
    conn = http.client.HTTPConnection("127.0.0.1", strict.port, timeout=60)
    conn.request("POST", "/", body=iter([b"a" * 15000, b"b" * 15000]), headers=auth,
                 encode_chunked=True)
    r = conn.getresponse()
    assert r.status == 413 and b"size limit" in r.read()
    conn.close()


def test_token(strict):
    assert error_of(strict, "/parse", '{"sentences": ["a"]}')[0] == 401
    assert error_of(strict, "/parse", '{"sentences": ["a"]}',
                    {"Authorization": "Bearer wrong"})[0] == 401
    c = cky.Client(strict.url, token="s3cret")
    assert c.parse(["Stocks", "fell", "."]).startswith("( (S ")
    assert c.stats()["requests"] >= 1
    with pytest.raises(cky.ServiceError) as e:
        cky.Client(strict.url).stats()
    assert e.value.status == 401
    assert strict.get("/live")["live"] and strict.get("/ready")["ready"]  # no token needed
    conn = http.client.HTTPConnection("127.0.0.1", strict.port, timeout=60)
    conn.request("GET", "/")
    r = conn.getresponse()
    assert r.status == 200 and b"<textarea" in r.read()


def test_queue_full_and_time_limit(strict):
    auth = {"Authorization": "Bearer s3cret"}
    c = cky.Client(strict.url, token="s3cret", retries=0)
    first = {}

    def long_request():
        # three sentences of 191 words, one per batch: the first takes seconds, past the
        # 1 s time limit, so the other two are dropped
        first["reply"] = post(strict, "/parse", json.dumps({"sentences": [LONG] * 3,
                                                            "tokenized": True}), auth)

    t = threading.Thread(target=long_request)
    t.start()
    deadline = time.monotonic() + 120
    while c.stats()["queue_length"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    status, headers, data = post(strict, "/parse", json.dumps({"sentences": ["a", "b", "c"]}),
                                 auth)
    assert status == 503, data
    assert headers["Retry-After"] == "1"
    assert json.loads(data)["error"] == \
        "the queue has no room for 3 more sentences (limit 4): try again later"
    t.join()
    status, _, data = first["reply"]
    assert status == 503 and json.loads(data)["error"] == \
        "not parsed within the time limit of 1 s"
    stats = c.stats()
    assert stats["refused"] >= 1 and stats["timed_out"] >= 1 and stats["queue_length"] == 0


def test_drain_on_sigterm(cky_exe, text_grammar, shared):
    with open(os.path.join(shared, "data", "ptb-sample", "dev.txt")) as f:
        lines = [" ".join(line.split()) for line in f][:40]
    want = cky_parse(cky_exe, text_grammar, lines)
    s = Server(cky_exe, text_grammar, "--engine", "cpu", "--batch", "4")
    try:
        got = {}
        t = threading.Thread(target=lambda: got.setdefault("r", post(
            s, "/parse", json.dumps({"sentences": lines, "tokenized": True}))))
        t.start()
        deadline = time.monotonic() + 120
        while s.get("/stats")["queue_length"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        s.proc.send_signal(signal.SIGTERM)
        t.join()
        assert s.proc.wait(300) == 0
        status, _, data = got["r"]
        assert status == 200
        assert [x["parse"] for x in json.loads(data)["sentences"]] == want
        assert "SIGTERM: answering the requests in flight" in s.log()
        assert s.log().rstrip().endswith("cky serve: stopped")
    finally:
        s.close()


def test_command_line(cky_exe, text_grammar, server):
    r = subprocess.run([cky_exe, "serve", "-g", text_grammar, "--host", "0.0.0.0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is not a loopback address: give --token-file" in r.stderr
    r = subprocess.run([cky_exe, "serve", "-g", text_grammar, "--engine", "cpu", "--port",
                        str(server.port)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Address already in use" in r.stderr, r.stderr
    r = subprocess.run([cky_exe, "serve", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--token-file" in r.stdout


def test_load_small(repo, cky_exe, text_grammar):
    """The load test, small: 300 sentences from 16 concurrent clients, line for line."""
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "serve-load"), "--cky", cky_exe,
                        "-g", text_grammar, "--sentences", "300", "--clients", "16",
                        "--max-size", "10"], capture_output=True, text=True, timeout=1200)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "replies equal to cky parse: 300 of 300 sentences; 0 failed" in r.stdout


def test_fuzz_small(repo, cky_exe, text_grammar):
    """The fuzzer, short: two rounds, 1,000 connections dropped."""
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "serve-fuzz"), "--cky", cky_exe,
                        "-g", text_grammar, "--rounds", "2", "--per-kind", "10", "--drops",
                        "1000"], capture_output=True, text=True, timeout=1200)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr


def test_kbest_lists_are_the_jars(cky_exe, shared):
    """/parse with "kbest": K: each sentence's k-best list (tree and max-rule score), the
    jar's own -kbest 10 lists (cli/dev.sample-sm5.kbest10.txt); "parse" is the list's first
    tree; K beyond the service's 50 is refused; the one-tree requests are unchanged."""
    gr = os.path.join(shared, "grammars", "sample-sm5", "sample-sm5.gr")
    ref = os.path.join(shared, "reference", "berkeley", "cli", "dev.sample-sm5.kbest10.txt")
    with open(ref, encoding="utf-8") as f:
        want = [b.split("\n") for b in f.read().split("\n\n")[:3]]
    with open(os.path.join(shared, "data", "ptb-sample", "dev.txt"), encoding="utf-8") as f:
        lines = f.read().splitlines()[:3]
    with Server(cky_exe, gr, "--engine", "ref", "--threads", "2") as s:
        body = json.dumps({"sentences": lines, "tokenized": True, "kbest": 10})
        status, _, data = post(s, "/parse", body)
        assert status == 200
        got = json.loads(data)["sentences"]
        assert [[e["parse"] for e in x["kbest"]] for x in got] == want
        for x in got:
            scores = [e["score"] for e in x["kbest"]]
            assert scores == sorted(scores, reverse=True)
            assert x["parse"] == x["kbest"][0]["parse"]
        status, _, data = post(s, "/parse", json.dumps({"sentences": lines[:1],
                                                        "tokenized": True, "kbest": 3}))
        assert [e["parse"] for e in json.loads(data)["sentences"][0]["kbest"]] == want[0][:3]
        status, _, data = post(s, "/parse", json.dumps({"sentences": lines[:1],
                                                        "tokenized": True}))
        assert status == 200 and "kbest" not in json.loads(data)["sentences"][0]
        assert json.loads(data)["sentences"][0]["parse"] == want[0][0]
        client = cky.Client(f"http://127.0.0.1:{s.port}")
        words = lines[0].split()
        assert client.parse(words, kbest=10) == \
            cky.Parser(gr, engine="ref", threads=1).parse(words, kbest=10)
        status, _, data = post(s, "/parse", json.dumps({"sentences": ["a"], "kbest": 51}))
        reply = json.loads(data)
        assert status == 400 and reply["status"] == 400 and reply["mode"] == "berkeley"
        assert reply["error"] == "kbest 51: at most 50 trees per list here"
