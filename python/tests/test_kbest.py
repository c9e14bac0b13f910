"""Parser.parse(s, kbest=K): the Berkeley parser's -kbest lists, (tree, max-rule score)
pairs best first: the jar's own lists for dev sentences
(../shared/reference/berkeley/cli/dev.sample-sm5.kbest10.txt), the first tree the one-tree
answer, scores that do not increase; [] for a sentence without a tree; the default return
type unchanged; the engines without lists refuse, naming kbest and the engine."""
import os

import pytest

import cky


def jar_lists(shared, n):
    """The first n lists of the jar's -kbest 10 file of sample-sm5."""
    path = os.path.join(shared, "reference", "berkeley", "cli", "dev.sample-sm5.kbest10.txt")
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    return [b.split("\n") for b in blocks[:n]]


def dev_lines(shared, n):
    with open(os.path.join(shared, "data", "ptb-sample", "dev.txt"), encoding="utf-8") as f:
        return [line.split() for line in f.read().splitlines()[:n]]


@pytest.fixture(scope="module")
def sm5(shared):
    return os.path.join(shared, "grammars", "sample-sm5", "sample-sm5.gr")


def test_lists_are_the_jars(shared, sm5):
    p = cky.Parser(sm5, engine="ref", threads=2)
    want = jar_lists(shared, 8)
    got = [p.parse(s, kbest=10) for s in dev_lines(shared, 8)]
    assert [[t for t, _ in lst] for lst in got] == want
    for lst in got:
        scores = [s for _, s in lst]
        assert all(isinstance(s, float) for s in scores)
        assert scores == sorted(scores, reverse=True)
    many = list(p.parse_many(dev_lines(shared, 8), kbest=10, batch_size=3))
    assert many == got


def test_first_tree_and_default_return(shared, sm5):
    p = cky.Parser(sm5, engine="cpu", threads=2)
    s = dev_lines(shared, 2)[1]
    one = p.parse(s)
    assert isinstance(one, str)
    lst = p.parse(s, kbest=3)
    assert len(lst) == 3 and lst[0][0] == one
    assert p.parse(s, kbest=1) == [lst[0]]
    assert p.parse(s, kbest=5)[:3] == lst  # another K: the parser of lists made again
    assert p.parse("", kbest=4) == []
    assert p.parse("Stocks fell .".split(), as_tree=True, kbest=2)[0][0].leaves() == \
        ["Stocks", "fell", "."]
    with pytest.raises(cky.ParseError):
        cky.Parser(sm5, engine="ref", strict=True).parse("", kbest=2)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            p.parse(s, kbest=bad)


def test_refusals(sm5, grammar):
    """The refusals name kbest and the engine or decoder; the parser still gives its one
    tree after one (sample-sm1 for the cpu engine's exhaustive kernels: quick to compile)."""
    with pytest.raises(cky.CkyError, match=r"--kbest 2: .*Viterbi"):
        cky.Parser(sm5, engine="ref", decoder="viterbi").parse("Stocks fell .", kbest=2)
    p = cky.Parser(grammar, engine="cpu", prune="none", decoder="viterbi", threads=2)
    with pytest.raises(cky.CkyError, match=r"--kbest 2: .*Viterbi"):
        p.parse("Stocks fell .", kbest=2)
    assert p.parse("Stocks fell .").startswith("( (S")
    q = cky.Parser(grammar, engine="cpu", prune="none", decoder="maxrule", threads=2)
    with pytest.raises(cky.CkyError, match=r"--kbest 2: the cpu engine"):
        q.parse("Stocks fell .", kbest=2)
