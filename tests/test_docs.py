"""The README and the user guide in docs/: every relative link and picture points at a file that
exists, every ``#anchor`` at a heading that exists (GitHub's slugs), the README stays short enough
to read in two minutes, and no picture or page of the guide is left unreachable."""

from __future__ import annotations

import glob
import os
import re

from conftest import ROOT

README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
README_MAX_LINES = 300

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def doc_files() -> list:
    return [README] + sorted(glob.glob(os.path.join(DOCS, "*.md")))


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks, with inline code spans blanked out."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text lowercased, punctuation dropped (hyphens and
    underscores kept), spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading counts as its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    return "".join(ch for ch in text.strip().lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def anchors(path: str) -> set:
    """Every anchor a Markdown file's headings make, duplicates numbered as GitHub does (x, x-1, ...)."""
    seen, out = {}, set()
    for _, line in prose_lines(open(path, encoding="utf-8").read()):
        m = _HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: str, root: str = ROOT) -> list:
    """One line per relative link or picture in ``path`` whose file or heading does not exist."""
    problems, here = [], os.path.dirname(path)
    text = open(path, encoding="utf-8").read()
    for number, line in prose_lines(text):
        for m in _LINK.finditer(line):
            target = m.group(1)
            if _SCHEME.match(target):
                continue  # http(s), mailto: not checked here
            where = f"{os.path.relpath(path, root)}:{number}: {target}"
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if os.path.relpath(dest, root).startswith(".."):
                problems.append(f"{where}: points outside the repository")
            elif not os.path.exists(dest):
                problems.append(f"{where}: no such file")
            elif anchor and not dest.endswith(".md"):
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif anchor and anchor not in anchors(dest):
                problems.append(f"{where}: no heading with the anchor #{anchor} in {os.path.relpath(dest, root)}")
    return problems


def test_github_slugs_of_headings_like_ours():
    assert slug("Retarget panel: onto your own character") == "retarget-panel-onto-your-own-character"
    assert slug("Install the extension in Blender (4.2 or newer)") == "install-the-extension-in-blender-42-or-newer"
    assert slug("Active Learning panel (paper 003)") == "active-learning-panel-paper-003"
    assert slug("Files `motionctl` writes") == "files-motionctl-writes"
    assert slug("Which engine for what?") == "which-engine-for-what"


def test_the_link_checker_finds_a_missing_file_a_missing_heading_and_ignores_code(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Same\n\n## Same\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text("# Top\n\n[ok](docs/a.md#same-1) [self](#top) [web](https://example.org/x)\n"
                    "[gone](docs/b.md) ![pic](docs/none.png) [bad](docs/a.md#nowhere) [out](../x.md)\n"
                    "`[code](nowhere.md)`\n\n```sh\n[fenced](nowhere.md)\n```\n", encoding="utf-8")
    found = broken_links(str(page), root=str(tmp_path))
    assert [p.split(": ", 1)[0] for p in found] == ["README.md:4"] * 4, found
    assert any("docs/b.md: no such file" in p for p in found)
    assert any("docs/none.png: no such file" in p for p in found)
    assert any("#nowhere" in p for p in found)
    assert any("outside the repository" in p for p in found)


def test_every_relative_link_and_picture_in_the_readme_and_the_guide_exists():
    files = doc_files()
    assert len(files) > 1, "the user guide in docs/ is missing"
    problems = [p for path in files for p in broken_links(path)]
    assert not problems, "\n".join(problems)


def test_the_readme_reads_in_two_minutes():
    with open(README, encoding="utf-8") as fh:
        lines = fh.read().rstrip("\n").split("\n")
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines: move detail into docs/"


def _targets(path: str) -> set:
    here = os.path.dirname(path)
    return {os.path.normpath(os.path.join(here, m.group(1).partition("#")[0]))
            for _, line in prose_lines(open(path, encoding="utf-8").read()) for m in _LINK.finditer(line)
            if not _SCHEME.match(m.group(1)) and m.group(1).partition("#")[0]}


def test_every_page_of_the_guide_is_in_its_index_and_every_picture_is_shown():
    index = _targets(os.path.join(DOCS, "README.md"))
    pages = {os.path.normpath(p) for p in glob.glob(os.path.join(DOCS, "*.md"))} - {os.path.join(DOCS, "README.md")}
    assert pages and not pages - index, f"pages not in docs/README.md: {sorted(pages - index)}"
    shown = set().union(*(_targets(p) for p in doc_files()))
    pictures = {os.path.normpath(p) for p in glob.glob(os.path.join(DOCS, "*.png"))}
    assert not pictures - shown, f"pictures in docs/ shown nowhere: {sorted(pictures - shown)}"
