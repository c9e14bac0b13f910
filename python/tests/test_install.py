"""The README's promise, end to end: in a fresh virtual environment, with no package index
(PIP_NO_INDEX: nothing may be downloaded), `pip install ./python` installs the package with
the repository's libcky.so, and the README's Python example parses raw text with it."""
import os
import re
import subprocess
import sys
import venv

import pytest


def readme_example(repo):
    """The Python example of the README (the ```python block after <!-- python-example -->)."""
    with open(os.path.join(repo, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- python-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python example block"
    return m.group(1)


def test_pip_install_offline_and_readme_example(repo, shared, tmp_path):
    if not os.path.isfile(os.path.join(repo, "build", "libcky.so")):
        pytest.fail("build/libcky.so is missing: run make first")
    if not os.path.isdir(os.path.join(repo, "..", "shared", "grammars")):
        pytest.skip("the README example reads ../shared beside the repository")
    env_dir = tmp_path / "venv"
    try:
        venv.EnvBuilder(with_pip=True).create(env_dir)
    except Exception as e:  # Debian without python3-venv: no ensurepip
        pytest.skip(f"cannot make a virtual environment with pip here: {e}")
    python = str(env_dir / "bin" / "python")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("CKY_LIBRARY", None)
    env.pop("PYTHONPATH", None)
    install = subprocess.run([python, "-m", "pip", "install", "./python"], cwd=repo, env=env,
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    example = readme_example(repo)
    assert len(example.strip().splitlines()) <= 5
    run = subprocess.run([python, "-c", example], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    trees = run.stdout.splitlines()
    assert len(trees) == 3 and all(t.startswith("( (S ") for t in trees), run.stdout
    where = subprocess.run([python, "-c", "import cky; print(cky.__file__)"], cwd=str(tmp_path),
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(env_dir)), where  # the installed copy, not the source tree


def test_readme_shell_examples_write_only_ignored_files(repo):
    """The README's runnable shell examples (```sh blocks, run from the repository) write
    only under build/ (ignored by git) or outside the repository, never an untracked file
    beside the sources."""
    with open(os.path.join(repo, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    assert blocks
    targets = [t for b in blocks for t in re.findall(r"(?:-o|>)\s+(\S+)", b)]
    assert targets, "no example writes a file: this test checks nothing"
    bad = [t for t in targets if not t.startswith(("build/", "/", "../"))]
    assert not bad, f"README examples write into the repository: {bad}"
