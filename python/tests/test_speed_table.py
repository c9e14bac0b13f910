"""docs/speed.md's table is what tools/speed-table makes from the committed docs/bench/*.json
files (so the table cannot drift from the measurements), and the script reads the layouts
it promises: the cpu engine's and the gpu engine's `cky bench --json` (the hand-written
fixture of tools/fixtures, not a measurement), a sidecar per file, errors named."""
import json
import os
import shutil
import subprocess
import sys


def run(repo, *args):
    return subprocess.run([sys.executable, os.path.join(repo, "tools", "speed-table"), *args],
                          capture_output=True, text=True)


def test_committed_table_is_what_the_files_make(repo):
    r = run(repo, "--check")
    assert r.returncode == 0, r.stderr


def make_doc(tmp_path):
    doc = tmp_path / "speed.md"
    doc.write_text("# x\n\n<!-- speed-table:begin (made by tools/speed-table from "
                   "docs/bench/*.json: do not edit) -->\n<!-- speed-table:end -->\n\ntail\n")
    return doc


def gpu_bench(repo):
    """The fixture's layout with the decoders list of today's `cky bench --json`."""
    with open(os.path.join(repo, "tools", "fixtures", "bench-json-format.fixture.json"),
              encoding="utf-8") as f:
        row = json.load(f)
    row.update(engine="gpu", decoder="viterbi",
               end_to_end={"sentences_per_second": 450.25},
               passes=[{"pass": "inside", "semiring": "max-plus", "peak": "add+max"}])
    top = {k: row[k] for k in ("grammar", "input", "engine", "device", "sentences")}
    top["decoders"] = [dict(row, supported=True),
                       {"decoder": "maxrule", "supported": False, "reason": "test"}]
    return top


def test_rows_from_the_gpu_layout_and_a_sidecar(repo, tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "h200.json").write_text(json.dumps(gpu_bench(repo)))
    (bench / "h200.meta.json").write_text(json.dumps(
        {"commit": "abc1234", "date": "2026-12-01", "command": "cky bench -i a|b --json",
         "note": "a fixture"}))
    doc = make_doc(tmp_path)
    r = run(repo, "--bench-dir", str(bench), "--doc", str(doc))
    assert r.returncode == 0, r.stderr
    text = doc.read_text()
    rows = [l for l in text.splitlines() if l.startswith("| FIXTURE")]
    assert len(rows) == 1, text  # the unsupported decoder makes no row
    cells = [c.strip() for c in rows[0].strip("|").split(" | ")]
    assert cells[1:7] == ["fixture", "fixture.txt (300)", "viterbi", "exhaustive", "gpu",
                          "600.0"], cells
    assert cells[7:11] == ["450.2", "20.0% (add+max)", "abc1234", "2026-12-01"], cells
    assert cells[11] == "`cky bench -i a\\|b --json`", cells
    assert "[1] a fixture" in text and text.endswith("<!-- speed-table:end -->\n\ntail\n")
    assert run(repo, "--bench-dir", str(bench), "--doc", str(doc), "--check").returncode == 0
    # a table edited by hand is caught
    doc.write_text(text.replace("600.0", "700.0"))
    r = run(repo, "--bench-dir", str(bench), "--doc", str(doc), "--check")
    assert r.returncode == 1 and "700.0" in r.stderr


def test_missing_sidecar_and_fields_are_named(repo, tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    shutil.copy(os.path.join(repo, "tools", "fixtures", "bench-json-format.fixture.json"),
                bench / "old.json")
    doc = make_doc(tmp_path)
    r = run(repo, "--bench-dir", str(bench), "--doc", str(doc))
    assert r.returncode == 1 and "old.meta.json" in r.stderr
    (bench / "old.meta.json").write_text(json.dumps({"commit": "abc1234"}))
    r = run(repo, "--bench-dir", str(bench), "--doc", str(doc))
    assert r.returncode == 1 and "date, command" in r.stderr
