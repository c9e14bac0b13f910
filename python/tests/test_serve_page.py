"""The page of `cky serve` (serve/page/) in a real browser: headless Chromium driven by
Selenium (Debian: chromium, chromium-driver, python3-selenium) types a sentence, presses
Parse, and reads the drawn tree's labels and words back from the SVG: they must be the
tree the API gives for the same text, node for node in prefix order. Skipped, with the
reason, where Chromium, its driver or Selenium is missing."""
import os
import sys

import cky

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
from serve_harness import Server  # noqa: E402

SENTENCE = '"Stocks fell sharply," the company said (again).'


def prefix_order(tree):
    """(labels, words) of a PTB string in prefix order, the outer unlabelled root dropped."""
    tokens = tree.replace("(", " ( ").replace(")", " ) ").split()
    labels, words = [], []
    for k, t in enumerate(tokens):
        if t in "()":
            continue
        (labels if tokens[k - 1] == "(" else words).append(t)
    return labels, words


def test_page_draws_the_tree(repo, shared, browser):
    grammar = os.path.join(shared, "grammars", "sample-sm1", "sample-sm1")
    with Server(os.path.join(repo, "build", "cky"), grammar, "--engine", "cpu") as s:
        want = cky.Client(s.url).parse(SENTENCE)
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait
        browser.get(s.url + "/")
        box = browser.find_element(By.ID, "text")
        box.clear()
        box.send_keys(SENTENCE)
        browser.find_element(By.ID, "parse").click()
        WebDriverWait(browser, 120).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, "#results svg text.label")))
        labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR,
                                                        "#results svg text.label")]
        words = [e.text for e in browser.find_elements(By.CSS_SELECTOR,
                                                       "#results svg text.word")]
        assert (labels, words) == prefix_order(want)
        assert labels[0] == "S" and words[0] == "``" and "-LRB-" in words
        scores = browser.find_element(By.CSS_SELECTOR, "#results .scores").text
        assert scores.startswith("sentence 1: score -") and "-inf" not in scores
        assert browser.find_element(By.CSS_SELECTOR, "#results .ptb").text == want
        assert "grammar sample-sm1, decoder viterbi" in browser.find_element(
            By.ID, "info").text
