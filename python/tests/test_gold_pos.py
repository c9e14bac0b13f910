"""Parser.parse(words, tags=[...]) and parse_many(..., tags=...): gold part-of-speech tags,
as `cky parse --gold-pos` (the Berkeley parser's -useGoldPOS), against the jar's own
output for dev sentences with sample-sm5 (../shared/reference/berkeley/cli/
dev.sample-sm5.goldpos.txt, from dev.mrg's words and tags as make-cli-refs.sh's gold_pos
writes them) and against the command's (trees and scores); k-best lists that keep the
tags; a sentence its tags give no tree parsed without them (a warning); the tag up to its
first "-"; the refusals (counts that differ, raw text, no pruning)."""
import logging
import os
import re
import subprocess

import pytest

import cky

N = 18
RETRIED = 16  # sentence 17: its -LRB- tags are the empty tag to the jar: no tree with them


def dev_tagged(shared, n):
    """(words, tags) of the first n trees of dev.mrg as the jar read them: the leaves
    (TAG word), -NONE- left out (tools/berkeley/make-cli-refs.sh's gold_pos)."""
    with open(os.path.join(shared, "data", "ptb-sample", "dev.mrg"), encoding="utf-8") as f:
        trees = re.split(r"\n(?=\()", f.read().strip())
    out = []
    for tree in trees[:n]:
        pairs = [(w, t) for t, w in re.findall(r"\(([^\s()]+) ([^\s()]+)\)", tree)
                 if t != "-NONE-"]
        out.append(([w for w, _ in pairs], [t for _, t in pairs]))
    return out


def reference(shared, name, n):
    with open(os.path.join(shared, "reference", "berkeley", name), encoding="utf-8") as f:
        return f.read().splitlines()[:n]


@pytest.fixture(scope="module")
def sm5(shared):
    return os.path.join(shared, "grammars", "sample-sm5", "sample-sm5.gr")


def test_gold_tags_are_the_jars(repo, shared, sm5, tmp_path, caplog):
    dev = dev_tagged(shared, N)
    words, tags = [w for w, _ in dev], [t for _, t in dev]
    jar = reference(shared, "cli/dev.sample-sm5.goldpos.txt", N)
    plain = reference(shared, "dev.sample-sm5.maxrule.mrg", N)
    assert sum(a != b for a, b in zip(jar, plain)) == 7  # the tags change these trees
    assert "-LRB-" in tags[RETRIED]
    p = cky.Parser(sm5, engine="ref", threads=2)
    with caplog.at_level(logging.WARNING, logger="cky"):
        got = list(p.parse_many(words, tags=tags, batch_size=5))
    assert got == jar
    warned = [r.getMessage() for r in caplog.records if r.name == "cky"]
    assert warned == [f"sentence {RETRIED + 1}: no tree with the gold tags: parsed without "
                      "them, as the Berkeley parser does"]
    assert p.parse(words[0], tags=tags[0]) == jar[0]
    path = tmp_path / "in.tags"
    path.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(ws, ts)) + "\n"
                            for ws, ts in dev), encoding="utf-8")
    cmd = [os.path.join(repo, "build", "cky"), "parse", "-g", sm5, "--engine", "ref",
           "--gold-pos", "-i", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert got == out.splitlines()
    out = subprocess.run(cmd + ["--tree-likelihood", "--sentence-likelihood", "--confidence"],
                         capture_output=True, text=True, check=True).stdout
    scored = list(p.parse_many(words, tags=tags, scores=True))
    assert [t for t, _ in scored] == jar
    assert [(sc.tree_likelihood, sc.sentence_likelihood, sc.confidence) for _, sc in scored] \
        == [tuple(float(x) for x in line.split("\t")[:3]) for line in out.splitlines()]
    lists = list(p.parse_many(words[:3], tags=tags[:3], kbest=3))
    assert [lst[0][0] for lst in lists] == jar[:3]
    for (ws, ts), lst in zip(dev, lists):
        for t, _ in lst:
            assert all(f"({g} {w})" in t for w, g in zip(ws, ts)), t


def test_wrong_tags(grammar, caplog):
    p = cky.Parser(grammar, engine="ref")
    with caplog.at_level(logging.WARNING, logger="cky"):
        assert p.parse(["The", "dog"], tags=["DT", "NOSUCHTAG"]) == p.parse(["The", "dog"])
    assert "no tree with the gold tags" in caplog.text
    words = ["Time", "flies", "like", "an", "arrow"]
    tree = p.parse(words, tags=["VB", "NNS", "IN", "DT", "NN"])
    assert "(VB Time)" in tree and "(NNS flies)" in tree
    assert p.parse(words, tags=["VB-HLN", "NNS", "IN", "DT-X", "NN"]) == tree
    assert p.parse([], tags=[]) == cky.NO_TREE
    with pytest.raises(ValueError, match="5 tokens but 4 tags"):
        p.parse(words, tags=["VB", "NNS", "IN", "DT"])
    with pytest.raises(ValueError, match="sentence 2: 1 token but 2 tags"):
        list(p.parse_many([["a"], ["b"]], tags=[["DT"], ["NN", "NN"]]))
    with pytest.raises(ValueError, match="sentence 2: more sentences than tag lists"):
        list(p.parse_many([["a"], ["b"]], tags=[["DT"]]))
    with pytest.raises(ValueError, match="sentence 2: more tag lists than sentences"):
        list(p.parse_many([["a"]], tags=[["DT"], ["NN"]]))
    with pytest.raises(TypeError, match="not raw text"):
        p.parse("Time flies", tags=["NN", "VBZ"])
    with pytest.raises(ValueError, match="non-empty str without white space"):
        p.parse(["a"], tags=["D T"])
    q = cky.Parser(grammar, engine="ref", prune="none")
    with pytest.raises(cky.CkyError, match="gold tags need pruning"):
        q.parse(words, tags=["VB", "NNS", "IN", "DT", "NN"])
