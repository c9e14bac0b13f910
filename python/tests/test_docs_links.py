"""Every relative link of README.md and docs/*.md names a file of the repository and, with
an #anchor, a heading of that page (GitHub's anchor of it) or an <a id="..."> there: pages
that move (as the session log did, into docs/history.md) cannot leave links behind."""
import glob
import os
import re

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(path):
    """The page's lines outside fenced code blocks, with code spans blanked."""
    out, fenced = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```") and not re.match(r"\s*```[^`]*```", line):
                fenced = not fenced
                continue
            if not fenced:
                out.append(re.sub(r"`+[^`]*`+", "``", line))
    return out


def anchors(path):
    """GitHub's heading anchors of a page, and its explicit <a id> anchors."""
    found, seen = set(), {}
    for line in prose(path):
        found.update(re.findall(r'<a (?:id|name)="([^"]+)"', line))
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).replace("``", "").lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    # headings' code spans count by their text: read the raw headings too
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#{1,6}\s+(.*?)\s*$", line)
            if m:
                found.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return found


def test_relative_links_resolve(repo):
    pages = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    bad = []
    for page in pages:
        for line in prose(page):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = f"{os.path.relpath(page, repo)}: ({target})"
                if not os.path.exists(dest):
                    bad.append(f"{where}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    bad.append(f"{where}: no anchor #{anchor} in {os.path.relpath(dest, repo)}")
    assert not bad, "\n".join(bad)
