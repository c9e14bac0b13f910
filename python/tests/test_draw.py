"""`cky draw`: trees into SVG files. Every picture of the sample's dev.mrg is well-formed
XML (xml.etree) whose text elements are the tree's labels and words in prefix order; the
stacked form, gzipped input, the errors; and, in headless Chromium (Selenium), the longest
tree (over 60 words) rendered: no two text elements' bounding boxes overlap, each text lies
within the width of the box the layout counted for it, and no edge runs through a text."""
import gzip
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest

SVG = "{http://www.w3.org/2000/svg}"
CHAR_WIDTH, PAD_X = 8.5, 3  # tree_draw_style_default's px per character and padding


def cky(repo, *args, **kw):
    exe = os.path.join(repo, "build", "cky")
    if not os.access(exe, os.X_OK):
        pytest.fail("build/cky is missing: run make first")
    return subprocess.run([exe, "draw", *args], capture_output=True, text=True, **kw)


def trees(text):
    """(labels, words) of each tree of a .mrg text, in prefix order, outer roots dropped."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    out, depth, labels, words = [], 0, [], []
    for k, t in enumerate(tokens):
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth == 0:
                out.append((labels, words))
                labels, words = [], []
        else:
            (labels if tokens[k - 1] == "(" else words).append(t)
    return out


def texts(path):
    """(labels, words) of an SVG file's text elements, and its root."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg" and root.get("version") == "1.1"
    t = list(root.iter(SVG + "text"))
    return ([e.text for e in t if e.get("class") == "label"],
            [e.text for e in t if e.get("class") == "word"]), root


@pytest.fixture(scope="module")
def dev(shared):
    path = os.path.join(shared, "data", "ptb-sample", "dev.mrg")
    with open(path) as f:
        return path, trees(f.read())


def test_one_svg_per_tree(repo, dev, tmp_path):
    path, want = dev
    out = tmp_path / "svg"
    r = cky(repo, "-i", path, "-d", str(out))
    assert r.returncode == 0, r.stderr
    files = sorted(os.listdir(out))
    assert files == [f"{k:04d}.svg" for k in range(1, len(want) + 1)]
    for name, tree in zip(files, want):
        got, root = texts(out / name)
        assert got == tree, name
        assert float(root.get("width")) > 0 and root.get("viewBox").startswith("0 0 ")


def test_stacked_and_gzipped(repo, shared, tmp_path):
    one_per_line = os.path.join(shared, "reference", "berkeley", "dev.sample-sm5.maxrule.mrg")
    with open(one_per_line) as f:
        lines = f.readlines()[:20] + ["(())\n"]
    gz = tmp_path / "trees.mrg.gz"
    with gzip.open(gz, "wt") as f:
        f.writelines(lines)
    r = cky(repo, "-i", str(gz), "-o", str(tmp_path / "all.svg"))
    assert r.returncode == 0, r.stderr
    (labels, words), root = texts(tmp_path / "all.svg")
    want = trees("".join(lines))
    assert labels == [x for t in want for x in t[0]]
    assert words == [x for t in want for x in t[1]]
    assert [e.text for e in root.iter(SVG + "text") if e.get("class") == "empty"] == \
        ["(no parse)"]
    r = cky(repo, input="".join(lines[:2]))  # stdin to stdout
    assert r.returncode == 0 and r.stdout.startswith("<?xml") and r.stdout.count("<svg ") == 1


def test_errors(repo, tmp_path):
    bad = tmp_path / "bad.mrg"
    bad.write_text("(S (NN a))\n(S (NN b)\n")
    r = cky(repo, "-i", str(bad), "-o", str(tmp_path / "x.svg"))
    assert r.returncode == 1 and f"cky draw: {bad}:2:" in r.stderr, r.stderr
    assert not (tmp_path / "x.svg").exists()  # written whole or not at all
    r = cky(repo, "-i", str(tmp_path / "missing.mrg"))
    assert r.returncode == 1 and "missing.mrg" in r.stderr
    empty = tmp_path / "empty.mrg"
    empty.write_text("")
    r = cky(repo, "-i", str(empty))
    assert r.returncode == 1 and "no trees" in r.stderr
    r = cky(repo, "-o", "a.svg", "-d", "dir")
    assert r.returncode == 2 and "one or the other" in r.stderr
    r = cky(repo, "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: cky draw")


def crosses(x1, y1, x2, y2, box):
    """Whether the segment runs through the rectangle's inside (Liang and Barsky)."""
    left, top, w, h = box
    t0, t1 = 0.0, 1.0
    for p, q in ((x1 - x2, x1 - left), (x2 - x1, left + w - x1),
                 (y1 - y2, y1 - top), (y2 - y1, top + h - y1)):
        if p == 0:
            if q <= 0:
                return False
        elif p < 0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
    return t1 - t0 > 1e-9


def test_longest_tree_in_a_browser(repo, dev, tmp_path, browser):
    path, want = dev
    k = max(range(len(want)), key=lambda i: len(want[i][1]))
    assert len(want[k][1]) >= 60
    out = tmp_path / "svg"
    assert cky(repo, "-i", path, "-d", str(out)).returncode == 0
    svg = out / f"{k + 1:04d}.svg"
    browser.get("file://" + str(svg))
    boxes = browser.execute_script("""
        return Array.from(document.querySelectorAll('text')).map(function (e) {
            var b = e.getBBox();
            return [b.x, b.y, b.width, b.height, e.textContent, e.x.baseVal[0].value];
        });""")
    lines = browser.execute_script("""
        return Array.from(document.querySelectorAll('line')).map(function (e) {
            return ['x1', 'y1', 'x2', 'y2'].map(function (a) {
                return e[a].baseVal.value; });
        });""")
    assert len(boxes) == len(want[k][0]) + len(want[k][1]) and len(lines) >= len(boxes) - 1
    for i, (x, y, w, h, text, centre) in enumerate(boxes):
        half = (len(text) * CHAR_WIDTH + 2 * PAD_X) / 2  # of the layout's box
        assert w > 0 and h > 0 and centre - half <= x and x + w <= centre + half, \
            f"{text!r}: {w:.2f} px wide at {x:.2f}, outside its box {centre - half:.2f} to " \
            f"{centre + half:.2f}"
        for (x2, y2, w2, h2, text2, _) in boxes[:i]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, \
                f"{text!r} at {(x, y, w, h)} overlaps {text2!r} at {(x2, y2, w2, h2)}"
        for (x1, y1, x2, y2) in lines:
            assert not crosses(x1, y1, x2, y2, (x, y, w, h)), \
                f"the line {(x1, y1, x2, y2)} runs through {text!r} at {(x, y, w, h)}"
    browser.set_window_size(1600, 800)
    browser.save_screenshot(str(tmp_path / "longest.png"))
    assert os.path.getsize(tmp_path / "longest.png") > 10000
