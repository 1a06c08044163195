"""Pure parts of the adapters: list-anchor parsing and its drop count, detail parsing, settings validation, host rules."""

from __future__ import annotations

import logging
from decimal import Decimal

import pytest

from sources.base import SourceMangaRef
from sources.config import HtmlSourceConfig
from sources.demo import demo_settings
from sources.errors import FetchRefused, SourceConfigError
from sources.hosts import HostGuard
from sources.page_images import parse_page_images
from sources.parsing import (
    key_from_url,
    parse_chapter_items,
    parse_manga_list_anchors,
    parse_manga_metadata,
)
from sources.statuses import normalise_status

pytestmark = pytest.mark.sqlite_ok

BASE = "https://manga.example.com/latest"
LIST_HTML = """
<ul>
  <a class="manga-link" href="/manga/one" title="One">One</a>
  <a class="manga-link" title="No href">x</a>
  <a class="manga-link" href="/manga/two" title="">x</a>
  <a class="manga-link" href="  " title="Blank href">x</a>
  <a class="manga-link" href="https://manga.example.com/manga/three" title="Three">Three</a>
  <a class="other" href="/manga/four" title="Not selected">x</a>
</ul>
"""


def test_parse_manga_list_anchors_counts_and_logs_dropped_anchors(caplog):
    with caplog.at_level(logging.WARNING, logger="sources.parsing"):
        refs, dropped = parse_manga_list_anchors(LIST_HTML, BASE, "a.manga-link")
    assert dropped == 3
    assert refs == [
        SourceMangaRef("one", "https://manga.example.com/manga/one", "One"),
        SourceMangaRef("three", "https://manga.example.com/manga/three", "Three"),
    ]
    [record] = caplog.records
    assert "dropped 3 anchor(s)" in record.getMessage()


def test_parse_manga_list_anchors_returns_refs_unchanged_and_stays_quiet_when_nothing_is_dropped(caplog):
    html = '<a class="m" href="/manga/a?x=1" title=" A  ">A</a><a class="m" href="/manga/b/" title="B">B</a>'
    with caplog.at_level(logging.WARNING, logger="sources.parsing"):
        refs, dropped = parse_manga_list_anchors(html, BASE, "a.m")
    assert dropped == 0 and caplog.records == []
    assert [(r.key, r.url, r.title) for r in refs] == [
        ("a", "https://manga.example.com/manga/a?x=1", "A"),
        ("b", "https://manga.example.com/manga/b/", "B"),
    ]


def test_parse_manga_list_anchors_drops_hrefs_the_key_pattern_cannot_read():
    html = '<a class="m" href="/manga/a" title="A">A</a><a class="m" href="/ads/x" title="Ad">Ad</a>'
    refs, dropped = parse_manga_list_anchors(html, BASE, "a.m", key_pattern=r"^/manga/([\w-]+)$")
    assert [r.key for r in refs] == ["a"] and dropped == 1


@pytest.mark.parametrize(
    ("url", "pattern", "key"),
    [
        ("https://x.test/manga/abc", None, "abc"),
        ("https://x.test/manga/abc/", None, "abc"),
        ("https://x.test/", None, None),
        ("https://x.test/title/123-some-name", r"/title/(\d+)", "123"),
        ("https://x.test/other/123", r"/title/(\d+)", None),
    ],
)
def test_key_from_url(url, pattern, key):
    assert key_from_url(url, pattern) == key


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Ongoing", "ongoing"),
        (" Completed ", "completed"),
        ("On  hold", "hiatus"),
        ("Dropped", "cancelled"),
        ("?", "unknown"),
    ],
)
def test_normalise_status(text, status):
    assert normalise_status(text) == status


DETAIL_HTML = """
<h1 class="manga-title">The Tide</h1>
<ul class="alt-titles"><li>Shio</li><li>The Tide</li></ul>
<img class="cover" data-src="/covers/tide.jpg" src="data:image/gif;base64,R0lGOD">
<div class="description"><p>Waves.</p></div>
<ul class="authors"><a class="author">A. Author</a><a class="author">A. Author</a></ul>
<span class="status">Completed</span>
<ul class="tags"><a class="tag">drama</a><a class="tag">sea</a></ul>
<ul class="chapters">
  <li class="chapter"><a class="chapter-link" href="/manga/tide/chapter/c3">Chapter 10.5: Special</a>
      <time datetime="2024-05-01T10:00:00+00:00">x</time></li>
  <li class="chapter"><a class="chapter-link" href="/manga/tide/chapter/c2">Chapter 2</a></li>
  <li class="chapter"><a class="chapter-link" href="/manga/tide/chapter/c1">Prologue</a></li>
  <li class="chapter"><a class="chapter-link">Chapter 9</a></li>
</ul>
"""


def test_detail_parsing_reads_metadata_and_sorts_chapters_in_reading_order():
    config = HtmlSourceConfig.from_settings(demo_settings(), source_id="t")
    meta, cover_url = parse_manga_metadata(DETAIL_HTML, "https://m.test/manga/tide", config)
    chapters = parse_chapter_items(DETAIL_HTML, "https://m.test/manga/tide", config).chapters
    assert (meta.title, meta.alt_titles, meta.description) == ("The Tide", ("Shio",), "Waves.")
    assert (meta.authors, meta.status, meta.tags) == (("A. Author",), "completed", ("drama", "sea"))
    assert cover_url == "https://m.test/covers/tide.jpg"
    # "Prologue" has no number but is an extra (catalog.chapter_numbers), after the main chapters; the
    # item without a link is dropped.
    assert [(c.key, c.kind, c.number, c.title) for c in chapters] == [
        ("c2", "chapter", Decimal("2"), ""),
        ("c3", "chapter", Decimal("10.5"), "Special"),
        ("c1", "extra", Decimal("0.01"), "Prologue"),
    ]
    assert chapters[1].published_at.isoformat() == "2024-05-01T10:00:00+00:00"
    assert chapters[1].url == "https://m.test/manga/tide/chapter/c3"


def test_parse_page_images_resolves_relative_urls_in_reading_order():
    config = HtmlSourceConfig.from_settings(demo_settings(), source_id="t")
    html = '<div class="reader"><img class="page" src="/p/1.png"><img class="page" src="https://cdn.test/2.jpg"></div>'
    assert parse_page_images(html, "https://m.test/manga/x/chapter/y", config) == [
        "https://m.test/p/1.png",
        "https://cdn.test/2.jpg",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"list_url": "/list"}, "'list_url' must contain the {page} placeholder"),
        ({"title": "h1[[["}, "'title' is not a valid CSS selector"),
        ({"title": "!!"}, "'title' is not a valid CSS selector"),
        ({"chapter_key_pattern": "(a)(b)"}, "'chapter_key_pattern' must have exactly one capture group"),
        ({"manga_key_pattern": "(unclosed"}, "'manga_key_pattern' is not a valid regular expression"),
        ({"requires_browser": "yes"}, "'requires_browser' must be true or false"),
        ({"image_hosts": "cdn.test"}, "'image_hosts' must be a list"),
        ({"image_hosts": ["cdn.test/path"]}, "'image_hosts' is invalid"),
        ({"session_cookie": "PHP SESSID"}, "'session_cookie' must be a plain cookie name"),
        ({"titel": "h1"}, "unknown settings key 'titel'"),
        ({"page_image": ""}, "'page_image' must be a non-empty string"),
        ({"manga_path": "../admin"}, "'manga_path' must be the site's manga directory"),
        ({"manga_path": "series/./x"}, "'manga_path' must be the site's manga directory"),
        ({"manga_path": "x" * 201}, "'manga_path' must be the site's manga directory"),
        ({"manga_path": "a b"}, "'manga_path' must be the site's manga directory"),
        ({"chapter_date_formats": ["%"]}, "'chapter_date_formats' has '%', which is not a strptime format"),
        ({"chapter_date_formats": ["%B %d, %Y", "%Q"]}, "'chapter_date_formats' has '%Q'"),
        ({"chapter_date_formats": ["12/11/2026"]}, "'chapter_date_formats' has '12/11/2026'"),
    ],
)
def test_html_settings_validation_names_the_bad_key(change, message):
    settings = demo_settings(**change)
    with pytest.raises(SourceConfigError, match=message.replace("{", r"\{").replace("(", r"\(")):
        HtmlSourceConfig.from_settings(settings, source_id="t")


def test_html_settings_require_the_essential_selectors():
    settings = demo_settings()
    del settings["page_image"]
    with pytest.raises(SourceConfigError, match="'page_image' is required"):
        HtmlSourceConfig.from_settings(settings, source_id="t")
    with pytest.raises(SourceConfigError, match="must be a JSON object"):
        HtmlSourceConfig.from_settings(["not", "a", "dict"], source_id="t")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://site.test:8080/manga/1", True),
        ("http://site.test/manga/1", False),  # same host, other port
        ("http://127.0.0.1:8080/x", False),
        ("https://cdn.test/i.png", True),
        ("http://cdn.test/i.png", True),
        ("https://cdn.test:8443/i.png", False),
        ("https://img.test:9000/i.png", True),
        ("https://img.test/i.png", False),
        ("https://a.b.wild.test/i.png", True),
        ("https://wild.test/i.png", False),
        ("https://evil-cdn.test/i.png", False),
        ("file:///etc/passwd", False),
        ("ftp://cdn.test/i.png", False),
        ("http://site.test:99999/", False),
    ],
)
def test_host_guard_allows_only_the_source_host_and_configured_image_hosts(url, allowed):
    guard = HostGuard("t", "http://site.test:8080/", ("cdn.test", "img.test:9000", "*.wild.test"))
    assert guard.allows(url) is allowed
    if not allowed:
        with pytest.raises(FetchRefused, match="not on the source's own host"):
            guard.check(url)
