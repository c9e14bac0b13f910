"""Parser.parse(s, scores=True): (tree, Scores), the scores the Berkeley parser prints beside
its trees, against the jar's own files for dev sentences with sample-sm5
(../shared/reference/berkeley/cli/dev.sample-sm5.{modelscore,sentence-likelihood,
tree-likelihood,confidence}.txt: the jar prints Double.toString, which reads back to the same
double; -modelScore with 8 decimals); nan for the scores exhaustive passes do not give; -inf
without a tree; kbest with scores refused."""
import math
import os

import pytest

import cky

N = 8


def jar_fields(shared, name):
    """(score text, tree) of the first N lines of the jar's file NAME."""
    path = os.path.join(shared, "reference", "berkeley", "cli", f"dev.sample-sm5.{name}.txt")
    with open(path, encoding="utf-8") as f:
        return [tuple(line.split("\t", 1)) for line in f.read().splitlines()[:N]]


@pytest.fixture(scope="module")
def sm5(shared):
    return os.path.join(shared, "grammars", "sample-sm5", "sample-sm5.gr")


@pytest.fixture(scope="module")
def dev(shared):
    with open(os.path.join(shared, "data", "ptb-sample", "dev.txt"), encoding="utf-8") as f:
        return [line.split() for line in f.read().splitlines()[:N]]


def test_scores_are_the_jars(shared, sm5, dev):
    p = cky.Parser(sm5, engine="ref", threads=2)
    got = list(p.parse_many(dev, scores=True, batch_size=3))
    assert got[0] == p.parse(dev[0], scores=True)
    assert [t for t, _ in got] == [p.parse(s) for s in dev]
    for name, field in (("sentence-likelihood", "sentence_likelihood"),
                        ("tree-likelihood", "tree_likelihood"),
                        ("confidence", "confidence")):
        want = jar_fields(shared, name)
        assert [t for t, _ in got] == [t for _, t in want], name
        assert [getattr(sc, field) for _, sc in got] == [float(x) for x, _ in want], name
    for (_, sc), (x, _) in zip(got, jar_fields(shared, "modelscore")):
        assert abs(sc.model_score - float(x)) <= 5e-9


def test_exhaustive_empty_and_kbest(sm5, dev):
    p = cky.Parser(sm5, engine="ref", prune="none", threads=2)
    tree, sc = p.parse(dev[1], scores=True)
    assert tree == p.parse(dev[1])
    assert math.isnan(sc.tree_likelihood) and math.isnan(sc.confidence)
    assert sc.sentence_likelihood < sc.model_score < 0
    tree, sc = p.parse("", scores=True)
    assert tree == cky.NO_TREE and sc.model_score == -math.inf
    with pytest.raises(ValueError, match="kbest and scores"):
        p.parse(dev[0], kbest=2, scores=True)
