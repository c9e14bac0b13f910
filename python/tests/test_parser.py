"""Tests of the cky package (python/cky) against the cky command: the same trees from raw
text and tokens, batching that keeps the order, errors with the library's messages."""
import logging
import os
import subprocess
import sys

import pytest

import cky

RAW = ["The company said it expects full vindication in court.",
       '"I don\'t know," he said (again).',
       "Shares of Acme Inc. rose 5% to $12.50 in the U.S.",
       "It's done."]


def cky_parse(repo, grammar, lines, *options):
    """Trees of `build/cky parse` for the lines, one per line."""
    exe = os.path.join(repo, "build", "cky")
    out = subprocess.run([exe, "parse", "-g", grammar, *options], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_raw_text_as_the_command(repo, grammar):
    p = cky.Parser(grammar, engine="ref")
    want = cky_parse(repo, grammar, RAW, "--engine", "ref", "--tokenize")
    assert [p.parse(s) for s in RAW] == want
    assert all(t.startswith("( (") for t in want)


def test_tokens_as_the_command(repo, grammar):
    p = cky.Parser(grammar, engine="ref")
    tokenized = [" ".join(cky.tokenize(s)) for s in RAW]
    want = cky_parse(repo, grammar, tokenized, "--engine", "ref")
    assert [p.parse(s.split()) for s in tokenized] == want
    assert [p.parse(s) for s in RAW] == want


def test_cpu_engine_matches_reference(grammar):
    ref = cky.Parser(grammar, engine="ref")
    cpu = cky.Parser(grammar, engine="cpu", threads=2)
    assert cpu.engine == "cpu"
    assert list(cpu.parse_many(RAW)) == list(ref.parse_many(RAW))


def test_parse_many_keeps_order_across_batches(grammar):
    p = cky.Parser(grammar, engine="ref")
    sentences = RAW + [s.split() for s in ["Stocks fell .", "Prices rose sharply ."]]
    one_by_one = [p.parse(s) for s in sentences]
    for size in (1, 2, 4, 100):
        got = p.parse_many(iter(sentences), batch_size=size)
        assert not isinstance(got, list)  # a generator: results stream
        assert list(got) == one_by_one
    assert len(set(one_by_one)) == len(one_by_one)


def test_tokenize():
    assert cky.tokenize('"I don\'t know," he said.') == \
        ["``", "I", "do", "n't", "know", ",", "''", "he", "said", "."]
    assert cky.tokenize("  ") == []
    assert cky.tokenize("a\0b") == ["a\ufffdb"]


def test_no_tree(grammar):
    p = cky.Parser(grammar, engine="ref", max_length=5)
    assert p.parse("") == cky.NO_TREE
    assert p.parse("one two three four five six seven") == cky.NO_TREE
    strict = cky.Parser(grammar, engine="ref", max_length=5, strict=True)
    with pytest.raises(cky.ParseError, match="7 words, longer than max_length 5"):
        strict.parse("one two three four five six seven")
    results = strict.parse_many(["Stocks fell.", "", "Prices rose."])
    assert next(results).startswith("( (")
    with pytest.raises(cky.ParseError, match="sentence 2: empty sentence"):
        next(results)


def test_errors(grammar, tmp_path):
    with pytest.raises(cky.CkyError, match="no-such-grammar"):
        cky.Parser(str(tmp_path / "no-such-grammar.gr"))
    with pytest.raises(cky.CkyError, match="unknown engine 'tpu'"):
        cky.Parser(grammar, engine="tpu")
    with pytest.raises(cky.CkyError, match="unknown decoder 'nbest'"):
        cky.Parser(grammar, decoder="nbest")
    with pytest.raises(ValueError):
        cky.Parser(grammar, threads=-1)
    p = cky.Parser(grammar, engine="ref")
    with pytest.raises(ValueError, match="white space"):
        p.parse(["two words"])
    with pytest.raises(ValueError):
        p.parse(["", "x"])
    with pytest.raises(TypeError):
        p.parse(b"bytes")
    with pytest.raises(TypeError, match="a str .raw text. or a list of str .tokens., not "
                                        "NoneType"):
        p.parse(None)
    with pytest.raises(cky.CkyError, match="is a directory"):
        cky.Parser(str(tmp_path))
    with pytest.raises(ValueError):
        list(p.parse_many(["a"], batch_size=0))
    p.close()
    with pytest.raises(cky.CkyError, match="closed"):
        p.parse("x")


def test_auto_engine(grammar):
    with cky.Parser(grammar) as p:
        assert p.engine in ("gpu", "cpu")
        assert p.parse("Stocks fell.").startswith("( (")
        engine = p.engine
    if engine == "cpu":  # no usable GPU here: asking for one is an error that says so
        with pytest.raises(cky.CkyError, match="CUDA|GPU"):
            cky.Parser(grammar, engine="gpu")


def test_as_tree(grammar):
    nltk = pytest.importorskip("nltk", reason="NLTK is not installed (python3-nltk)")
    p = cky.Parser(grammar, engine="ref")
    s = p.parse("Stocks fell.")
    t = p.parse("Stocks fell.", as_tree=True)
    assert isinstance(t, nltk.Tree)
    assert t.leaves() == ["Stocks", "fell", "."]
    assert nltk.Tree.fromstring(s) == t
    assert p.parse("", as_tree=True) is None
    assert [x.leaves() for x in p.parse_many(["A b.", "C d."], as_tree=True)] == \
        [["A", "b", "."], ["C", "d", "."]]


def test_maxrule_as_the_command(repo, grammar):
    """The default decoder with a native .gr grammar is maxrule, as the command's: the same
    trees as `cky parse` with no --decoder, on the ref engine and on the cpu engine."""
    p = cky.Parser(grammar, engine="ref")
    assert p.decoder == "maxrule"
    want = cky_parse(repo, grammar, RAW, "--engine", "ref", "--tokenize")
    assert [p.parse(s) for s in RAW] == want
    assert cky.Parser(grammar, engine="ref", decoder="viterbi").decoder == "viterbi"
    cpu = cky.Parser(grammar, engine="cpu", decoder="maxrule", threads=2)
    assert list(cpu.parse_many(RAW)) == want


def test_progress_callback_and_logging(shared, tmp_path, monkeypatch, caplog):
    """The open's long steps reach a progress function (Progress tuples, in order) or, by
    default, the "cky" logger; an exception of the function is raised by Parser()."""
    monkeypatch.setenv("CKY_CACHE", str(tmp_path / "cache"))  # cold: the kernels compile
    text = os.path.join(shared, "grammars", "sample-sm1", "sample-sm1")
    seen = []
    cky.Parser(text, engine="cpu", decoder="viterbi", progress=seen.append)
    assert all(isinstance(p, cky.Progress) for p in seen)
    assert seen[0].stage == "grammar" and seen[0].state == "begin"
    last = seen[-1]
    assert (last.stage, last.state, last.done, last.total, last.cached) == \
        ("compile", "end", 4, 4, 0)
    assert [p.done for p in seen if p.stage == "compile"] == \
        sorted(p.done for p in seen if p.stage == "compile")
    assert last.seconds >= 0
    with caplog.at_level(logging.INFO, logger="cky"):
        cky.Parser(text, engine="cpu", decoder="viterbi")  # warm: from the cache
    assert "4 kernels ready in" in caplog.text
    assert "(0 compiled, 4 from the cache)" in caplog.text

    def stop(p):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        cky.Parser(text, engine="cpu", progress=stop)
    with pytest.raises(TypeError, match="progress"):
        cky.Parser(text, engine="cpu", progress=3)


def test_as_tree_without_nltk_says_how_to_install_it(grammar, monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)  # import nltk fails, as where it is missing
    p = cky.Parser(grammar, engine="ref")
    with pytest.raises(ImportError, match="pip install nltk.*virtual environment"):
        p.parse("Stocks fell.", as_tree=True)


def test_version_is_the_command_s(repo):
    out = subprocess.run([os.path.join(repo, "build", "cky"), "--version"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"cky {cky.__version__} (commit "), out
