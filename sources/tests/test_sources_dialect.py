"""The html adapter's pure pieces: selector dialect, field specs, srcset, dates, script pages, settings, presets."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from selectolax.parser import HTMLParser

from sources.config import HtmlSourceConfig
from sources.dates import parse_date
from sources.errors import SourceConfigError
from sources.page_images import largest_srcset_candidate, parse_page_images
from sources.parsing import (
    key_from_url,
    parse_alt_titles,
    with_suffix,
)
from sources.presets import MADARA
from sources.selectors import parse_spec, select
from sources.statuses import normalise_status

DOC = HTMLParser(
    "<div class='item'><div class='h'><h5>Status</h5></div><div class='c'>OnGoing</div></div>"
    "<div class='item'><div class='h'><h5>Type</h5></div><div class='c'>Manhwa</div></div>"
    "<h1>Crimson Tide <span class='badge'>HOT</span></h1><p>Alt: <b>Red Tide</b></p>"
    "<img class='cover' data-src='/c.png' srcset='/s.png 110w, /l.png 193w'>"
)


def texts(selector: str) -> list[str]:
    return [node.text(strip=True) for node in select(DOC, selector)]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("div.item:contains(status) div.c", ["OnGoing"]),  # case-insensitive, descendants' text counts
        ("div.h:contains(Type) + div", ["Manhwa"]),  # combinators after the pseudo-class
        ("div.item:contains('type') > .c, h1", ["Manhwa", "Crimson TideHOT"]),  # quoted, in a group
        ("div:has(h5:contains(status)) > div.c", ["OnGoing"]),  # inside :has()
        ("p:containsOwn(alt)", ["Alt:Red Tide"]),
        ("p:containsOwn(red tide)", []),  # that text is a child's, not the p's own
        ("div.item:contains(nothing like it)", []),
    ],
)
def test_jsoup_contains_pseudo_classes(selector, expected):
    assert texts(selector) == expected


def test_contains_leaves_no_trace_in_the_document():
    select(DOC, "div.item:contains(status)")
    assert "data-mangalord" not in DOC.html


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("h1", "Crimson Tide HOT"),
        ("h1 ::own", "Crimson Tide"),
        ("img.cover @data-src", "/c.png"),
        ("div.item:contains(Type) div.c ::own", "Manhwa"),
    ],
)
def test_field_specs_read_text_own_text_or_an_attribute(spec, expected):
    assert parse_spec(spec).first(DOC) == expected


def test_a_field_spec_needs_something_to_read():
    with pytest.raises(ValueError):
        parse_spec("   ")


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("/s.png 110w, /l.png 193w", "/l.png"),
        ("/l.png 2x, /s.png 1x", "/l.png"),
        ("/only.png", "/only.png"),
        ("/a.png, /b.png 1.5x", "/b.png"),
    ],
)
def test_srcset_yields_the_largest_candidate(srcset, expected):
    assert largest_srcset_candidate(srcset) == expected


NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("November 12, 2026", dt.datetime(2026, 11, 12, tzinfo=dt.UTC)),
        ("November 5th, 2026", dt.datetime(2026, 11, 5, tzinfo=dt.UTC)),
        ("2026-11-12T10:00:00+02:00", dt.datetime(2026, 11, 12, 8, 0, tzinfo=dt.UTC)),
        ("2 days ago", NOW - dt.timedelta(days=2)),
        ("an hour ago", NOW - dt.timedelta(hours=1)),
        ("yesterday", NOW - dt.timedelta(days=1)),
        ("12 mins ago", NOW - dt.timedelta(minutes=12)),
        ("Chapter twelve", None),
        ("", None),
    ],
)
def test_chapter_dates_from_formats_and_relative_phrases(text, expected):
    assert parse_date(text, formats=["%B %d, %Y"], now=NOW) == expected


def test_relative_dates_follow_the_source_language():
    assert parse_date("hace 3 días", language="es", now=NOW) == NOW - dt.timedelta(days=3)
    assert parse_date("hace 3 días", language="en", now=NOW) is None


@pytest.mark.parametrize(
    ("text", "status"),
    [("OnGoing", "ongoing"), (" Completed ", "completed"), ("On Hold", "hiatus"), ("Canceled", "cancelled"),
     ("Ongoing (Season 2)", "ongoing"), ("Coming soon", "unknown")],
)  # fmt: skip
def test_status_words_as_themes_print_them(text, status):
    assert normalise_status(text) == status


def test_alt_titles_split_on_the_separator_and_drop_the_title():
    assert parse_alt_titles(["Akai Shio, Red Tide; Crimson Tide"], r"\s*[,;]\s*", "Crimson Tide") == (
        "Akai Shio",
        "Red Tide",
    )
    assert parse_alt_titles(["Fate/Zero"], None, "x") == ("Fate/Zero",)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://m.test/manga/a/chapter-1/", "https://m.test/manga/a/chapter-1/?style=list"),
        ("https://m.test/manga/a/chapter-1/?style=paged", "https://m.test/manga/a/chapter-1/?style=list"),
        ("https://m.test/manga/a/chapter-1/?style=list", "https://m.test/manga/a/chapter-1/?style=list"),
        ("https://m.test/c/?lang=en", "https://m.test/c/?style=list&lang=en"),
    ],
)
def test_chapter_url_suffix(url, expected):
    assert with_suffix(url, "?style=list") == expected


def test_chapter_keys_default_to_the_whole_path_so_they_are_unique_per_source():
    assert key_from_url("https://m.test/manga/a/chapter-1/?style=list", None, whole_path=True) == "manga/a/chapter-1"
    assert key_from_url("https://m.test/manga/a/", None) == "a"


def config(**given) -> HtmlSourceConfig:
    return HtmlSourceConfig.from_settings(given, source_id="t")


def test_inline_script_pages_when_the_reader_has_no_img():
    cfg = config(preset="mangathemesia")
    html = (
        "<div id='readerarea'></div><script>var x = 1;</script><script>ts_reader.run({\"sources\":"
        '[{"source":"Server 1","images":["https:\\/\\/cdn.test\\/1.jpg","\\/2.jpg"]}],"lazyload":true});</script>'
    )
    assert parse_page_images(html, "https://m.test/a-chapter-1/", cfg) == [
        "https://cdn.test/1.jpg",
        "https://m.test/2.jpg",
    ]
    with_img = "<div id='readerarea'><img src='data:image/gif;base64,x' data-lazy-src='/p1.jpg'></div>" + html
    assert parse_page_images(with_img, "https://m.test/a-chapter-1/", cfg) == ["https://m.test/p1.jpg"]


def test_a_preset_fills_in_keys_and_explicit_keys_override_or_remove_them():
    cfg = config(preset="madara", chapter_item="li.chapter", list_next=None)
    assert cfg.chapter_item == "li.chapter" and cfg.list_next is None
    assert cfg.chapter_list_url == MADARA["chapter_list_url"] and cfg.preset == "madara"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"preset": "wordpress"}, "settings key 'preset' names no known preset 'wordpress'"),
        ({"preset": "madara", "list_method": "PUT"}, "'list_method' must be GET or POST"),
        ({"preset": "madara", "list_body": {"page": 2}}, "'list_body' must be a JSON object of strings"),
        ({"preset": "madara", "list_body": {"p": "{page}"}}, "'list_body' needs list_method POST"),
        (
            {"preset": "madara", "chapter_list_url": "{manga}/x"},
            "'chapter_list_url' has an unknown placeholder {manga}",
        ),
        ({"preset": "madara", "chapter_list_id": None}, "'chapter_list_url' uses {id} but chapter_list_id is not set"),
        ({"preset": "madara", "chapter_date": []}, "'chapter_date' must be a field spec or a non-empty list"),
        ({"preset": "madara", "title": "h1 ::bogus"}, "'title' is not a valid CSS selector"),
        ({"preset": "madara", "date_language": "klingon"}, "'date_language' names no language the date parser knows"),
        ({"preset": "madara", "image_referer": "chapters"}, "'image_referer' must be"),
        ({"preset": "madara", "headers": {"Cookie": "a=b"}}, "'headers' cannot set header 'Cookie'"),
        ({"preset": "madara", "browser_wait_secs": 500}, "'browser_wait_secs' must be a number of seconds"),
        ({"preset": "mangathemesia", "page_image": None, "page_script": None}, "'page_image' is required"),
        ({"preset": "mangathemesia", "page_script": "no group"}, "'page_script' must have exactly one capture group"),
        (
            {"preset": "madara", "alt_titles_separator": "[,"},
            "'alt_titles_separator' is not a valid regular expression",
        ),
    ],
)
def test_new_settings_keys_are_validated_with_the_key_named(given, message):
    with pytest.raises(SourceConfigError) as caught:
        HtmlSourceConfig.from_settings(given, source_id="t")
    assert message in str(caught.value)


def test_the_readme_example_of_a_preset_less_site_is_valid():
    sources = (Path(__file__).resolve().parents[2] / "docs" / "sources.md").read_text()
    section = sources[sources.index("### Any other site: settings key by key") :]
    example = section[section.index("```json") + len("```json") : section.index("```", section.index("```json") + 7)]
    assert HtmlSourceConfig.from_settings(json.loads(example), source_id="t").page_script == "var pages = (\\[)"
