"""Every relative link in the documentation, and every pointer to it from the code, resolves.

The documentation is split over README.md and `docs/`, and sections move between pages as the
product grows: a link to a page or heading that moved breaks silently on GitHub, and an error
message that says "see docs/sources.md#presets" sends the reader nowhere. This test parses each
document with a real Markdown parser (so a link inside a code block is not a link) and resolves
each relative link to a file, and each `#anchor` to a heading slug spelled the way GitHub spells
it. It needs no database.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

pytestmark = pytest.mark.sqlite_ok

ROOT = Path(__file__).resolve().parents[2]
SOURCE_SUFFIXES = {".py", ".html", ".js", ".sh", ".toml", ".yaml", ".yml", ".service", ".example"}
SOURCE_NAMES = {"Makefile", "Dockerfile"}
SKIPPED_DIRS = {"data", "artifacts", "node_modules", "__pycache__"}
# A path to a Markdown file, optionally with an anchor, as code and messages write it.
POINTER = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)(?![\w])(?:#([\w-]+))?")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:name|id)=["']([^"']+)["']""")


def documents() -> list[Path]:
    """The Markdown pages a reader browses: README.md, docs/, and the bench and deploy READMEs."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [page for page in [*pages, ROOT / "bench" / "README.md", ROOT / "deploy" / "README.md"] if page.is_file()]


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)


def _parse(path: Path) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))


def _plain_text(inline: Token) -> str:
    return "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))


def anchors(path: Path) -> set[str]:
    """Every anchor a page has: its headings' slugs (repeats get -1, -2, …) and HTML name/id anchors."""
    tokens = _parse(path)
    found: set[str] = set()
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            base = slug(_plain_text(tokens[index + 1]))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    for token in _walk(tokens):
        if token.type in ("html_block", "html_inline"):
            found.update(HTML_ANCHOR.findall(token.content))
    return found


def links(path: Path) -> Iterator[tuple[int, str]]:
    """(line, target) of each link and image in a page, code blocks and code spans excluded."""
    line = 0
    for token in _walk(_parse(path)):
        if token.map:
            line = token.map[0] + 1
        if token.type == "link_open":
            yield line, str(token.attrs.get("href", ""))
        elif token.type == "image":
            yield line, str(token.attrs.get("src", ""))


def broken(base: Path, target: str) -> str | None:
    """Why `target` (a file, optionally with an anchor), read from the folder `base`, does not resolve."""
    if SCHEME.match(target):
        return None
    path_part, _, anchor = target.partition("#")
    path = (base / unquote(path_part)).resolve()
    if not path.exists():
        return f"no file {path_part}"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"no heading #{anchor} in {path.name}"
    return None


def link_broken(page: Path, target: str) -> str | None:
    """Why a link written in `page` does not resolve: to another file, or to a heading of this page."""
    path_part, _, anchor = target.partition("#")
    if path_part:
        return broken(page.parent, target)
    return None if not anchor or anchor in anchors(page) else f"no heading #{anchor} on this page"


def page_links_broken(page: Path, root: Path) -> list[str]:
    found = ((line, target, link_broken(page, target)) for line, target in links(page))
    return [f"{page.relative_to(root)}:{line}: {target} ({reason})" for line, target, reason in found if reason]


def source_files() -> Iterator[Path]:
    """Code, templates and scripts of the repository (no data, artifacts, virtualenvs or hidden folders)."""
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name not in SKIPPED_DIRS]
        for name in names:
            path = Path(folder) / name
            if path.suffix in SOURCE_SUFFIXES or name in SOURCE_NAMES:
                yield path


def pointers_broken(path: Path, root: Path = ROOT) -> list[str]:
    """The Markdown pointers in a source file ("docs/x.md#y", "bench/README.md") that do not resolve.

    A path is read from the repository's root, else from the file's own folder; a bare file name
    without an anchor names a file in its context and is not checked.
    """
    problems = []
    for number, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for match in POINTER.finditer(text):
            name, anchor = match.group(1), match.group(2)
            if "/" not in name and not anchor:
                continue
            target = name + (f"#{anchor}" if anchor else "")
            reasons = [broken(root, target), broken(path.parent, target)]
            if all(reasons):
                problems.append(f"{path.relative_to(root)}:{number}: {target} ({reasons[0]})")
    return problems


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Start here", "start-here"),
        ("OPDS 1.2", "opds-12"),
        ("Komelia / KMReader", "komelia--kmreader"),
        ("Politeness: how fast a site is asked", "politeness-how-fast-a-site-is-asked"),
        ("JavaScript challenges (Cloudflare and the like)", "javascript-challenges-cloudflare-and-the-like"),
        ("A source's reader settings", "a-sources-reader-settings"),
        ("Crawl (bench/crawl.py) — the headline", "crawl-benchcrawlpy--the-headline"),
        ("jobs_worker status", "jobs_worker-status"),
    ],
)
def test_a_heading_slug_is_spelled_as_github_spells_it(heading, expected):
    assert slug(heading) == expected


def test_repeated_headings_and_code_in_headings_get_githubs_anchors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Figures\n\n## Figures\n\n## Crawl (`bench/crawl.py`)\n\n```md\n# not a heading\n```\n")
    assert anchors(page) == {"figures", "figures-1", "crawl-benchcrawlpy"}


def test_the_check_finds_a_missing_file_a_missing_heading_and_ignores_code(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Present\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#present) [self](#page) [web](https://example.com/x.md#nope)\n\n"
        "[gone](missing.md) [moved](other.md#absent) [here](#nowhere)\n\n`[code](missing.md)`\n"
    )
    assert page_links_broken(page, tmp_path) == [
        "page.md:5: missing.md (no file missing.md)",
        "page.md:5: other.md#absent (no heading #absent in other.md)",
        "page.md:5: #nowhere (no heading #nowhere on this page)",
    ]


def test_the_check_finds_a_source_pointer_that_does_not_resolve(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Disk guard\n")
    code = tmp_path / "module.py"
    gone = "docs/" + "gone.md"
    code.write_text(f'raise ValueError("see docs/guide.md#disk-guard, or {gone}, or docs/guide.md#nothing")\n')
    assert pointers_broken(code, tmp_path) == [
        f"module.py:1: {gone} (no file {gone})",
        "module.py:1: docs/guide.md#nothing (no heading #nothing in guide.md)",
    ]


@pytest.mark.parametrize("page", documents(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_in_the_documentation_resolves(page):
    assert page_links_broken(page, ROOT) == []


def test_every_pointer_from_the_code_to_the_documentation_resolves():
    this_file = Path(__file__).resolve()  # its examples of broken pointers are on purpose
    problems = [problem for path in source_files() if path != this_file for problem in pointers_broken(path)]
    assert problems == []
