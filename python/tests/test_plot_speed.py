"""tools/plot-speed on the hand-written fixture of the `cky bench --json` layout
(tools/fixtures/bench-json-format.fixture.json, not a measurement): a PNG comes out; a JSON
without length buckets is refused with a message."""
import json
import os
import subprocess
import sys

import pytest


def run(repo, *args, **kw):
    return subprocess.run([sys.executable, os.path.join(repo, "tools", "plot-speed"), *args],
                          capture_output=True, text=True, **kw)


def test_plot_speed_draws_png(repo, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (python3-matplotlib)")
    fixture = os.path.join(repo, "tools", "fixtures", "bench-json-format.fixture.json")
    out = tmp_path / "speed.png"
    r = run(repo, fixture, "-o", str(out))
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10000
    # the same from stdin
    with open(fixture, encoding="utf-8") as f:
        r = run(repo, "-", "-o", str(tmp_path / "stdin.png"), stdin=f)
    assert r.returncode == 0, r.stderr


def test_plot_speed_needs_buckets(repo, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (python3-matplotlib)")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"sentences": 3, "sentences_per_second": 1.0}))
    r = run(repo, str(old), "-o", str(tmp_path / "x.png"))
    assert r.returncode != 0 and "no length buckets" in r.stderr
    assert not (tmp_path / "x.png").exists()
