"""pytest setup of the cky package tests: the package of this tree (python/cky) with the
repository's build/libcky.so, unless CKY_LIBRARY names another; the shared data folder
from $SHARED (default ../shared beside the repository)."""
import os
import shutil
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def shared():
    path = os.environ.get("SHARED", os.path.join(REPO, "..", "shared"))
    if not os.path.isdir(os.path.join(path, "grammars")):
        pytest.skip(f"no shared data folder at {path} (set SHARED)")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def grammar(shared):
    """The smallest grammar, for quick parses."""
    return os.path.join(shared, "grammars", "sample-sm1", "sample-sm1.gr")


@pytest.fixture
def browser():
    """Headless Chromium driven by Selenium (Debian: chromium, chromium-driver,
    python3-selenium); the test is skipped, with the reason, where one is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("no Selenium (apt-get install python3-selenium)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no Chromium or chromedriver (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    b = webdriver.Chrome(service=Service(driver), options=opts)
    yield b
    b.quit()
