"""The preset language's JSON capabilities as pure functions: value specs, templates, paging, captures, dates."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from selectolax.parser import HTMLParser

from sources.config import HtmlSourceConfig
from sources.dates import parse_date, utc_offset
from sources.errors import SourceConfigError
from sources.fields import capture_values, fill, parse_value_spec
from sources.json_parsing import NotJson, decode_answer, parse_json_chapters, parse_json_list, total_of
from sources.page_images import parse_page_images
from sources.paging import more_after, paging_values
from sources.site_urls import sibling_api_origin

pytestmark = pytest.mark.sqlite_ok

FEED = {
    "feed": {
        "openSearch$totalResults": {"$t": "3"},
        "entry": [
            {
                "title": {"$t": "Crimson Tide"},
                "link": [{"rel": "self", "href": "/x"}, {"rel": "alternate", "href": "/2026/11/crimson-tide.html"}],
            },
            {"title": {"$t": "No Link"}, "link": []},
        ],
    }
}


def json_config(**keys):
    base = {"list_url": "/api/q?page={page}", "list_anchor": "$.posts[*]", "list_link": "/series/{$.slug}"}
    base |= {"list_title": "$.postTitle", "title": "$.post.postTitle", "chapter_item": "$.post.chapters[*]"}
    base |= {"chapter_link_url": "{api}/api/chapter?chapterId={$.id}", "page_image": "$.chapter.images[*].url"}
    return HtmlSourceConfig.from_settings({**base, **keys}, source_id="s")


def test_a_json_path_reads_wildcards_and_filters_and_finds_nothing_on_html():
    assert parse_value_spec("$.feed.entry[*].title.'$t'").values(FEED) == ["Crimson Tide", "No Link"]
    assert parse_value_spec("$.link[?rel=='alternate'].href").first(FEED["feed"]["entry"][0]) == (
        "/2026/11/crimson-tide.html"
    )
    assert parse_value_spec("$.feed").values(HTMLParser("<p>x</p>")) == []
    assert parse_value_spec("p").values(FEED) == []


def test_post_processing_steps_regex_base64_and_html_inside_json():
    style = HTMLParser("<div class='cover' style=\"background-image:url('/c/1.png')\"></div>")
    assert parse_value_spec(r"div.cover @style | re:url\(['\"]?([^'\")]+)").first(style) == "/c/1.png"
    encoded = base64.b64encode(b"https://cdn.example.com/1.jpg").decode()
    assert parse_value_spec("$.src | base64").first({"src": encoded}) == "https://cdn.example.com/1.jpg"
    html_field = {"html": "<div><img src='/a.png'><img src='/b.png'></div>"}
    assert parse_value_spec("$.html | html:img @src").values(html_field) == ["/a.png", "/b.png"]
    assert parse_value_spec("$.src | base64").values({"src": "%%%"}) == []


def test_a_script_regex_captures_a_value_for_a_later_url():
    page = HTMLParser("<div id='clwd'><script>clwd.run('Crimson Tide');</script></div>")
    captured = capture_values(page, (("label", r"re:clwd\.run\('([^']+)'"),))
    assert captured == {"label": "Crimson Tide"}
    assert fill("/feeds/posts/default/-/Chapter/{label}?alt=json", captured) == (
        "/feeds/posts/default/-/Chapter/Crimson Tide?alt=json"
    )


def test_an_item_template_with_a_missing_path_marks_the_item_unusable():
    assert fill("/series/{$.slug}", {}, {"slug": "crimson-tide"}) == "/series/crimson-tide"
    assert fill("/series/{$.slug}", {}, {"title": "x"}) is None


def test_offset_and_start_index_paging_with_a_stated_total():
    assert paging_values(3, 21) == {"page": 3, "page_index": 2, "offset": 42, "start_index": 43}
    assert more_after(1, 2, 5, 2) is True and more_after(3, 2, 5, 1) is False
    assert more_after(1, 2, None, 2) is None
    assert total_of(FEED, "$.feed.'openSearch$totalResults'.'$t'") == 3


def test_a_json_list_reads_links_and_titles_and_drops_unusable_items():
    config = json_config()
    data = {"posts": [{"slug": "a", "postTitle": "A"}, {"postTitle": "no slug"}, {"slug": "b", "postTitle": "B"}]}
    refs, dropped = parse_json_list(data, "http://site.test/api/q?page=1", config, {})
    assert [(r.key, r.url, r.title) for r in refs] == [
        ("a", "http://site.test/series/a", "A"),
        ("b", "http://site.test/series/b", "B"),
    ]
    assert dropped == 1


def test_json_chapters_skip_locked_ones_and_read_numbers_keys_and_iso_dates():
    config = json_config(
        chapter_key="{$.mangaPost.slug}/{$.slug}",
        chapter_number="$.number",
        chapter_date="$.createdAt",
        chapter_skip=["$.isLocked", "$.isLockedByCoins"],
    )
    chapter = {"mangaPost": {"slug": "crimson-tide"}, "createdAt": "2026-11-12T10:00:00.000Z"}
    data = {
        "post": {
            "chapters": [
                {**chapter, "id": 7, "slug": "chapter-2", "number": 2, "isLocked": False},
                {**chapter, "id": 6, "slug": "chapter-1", "number": "1", "title": None},
                {**chapter, "id": 8, "slug": "chapter-3", "number": 3, "isLocked": True},
                {**chapter, "id": 9, "slug": "chapter-4", "number": 4, "isLockedByCoins": True},
            ]
        }
    }
    parsed = parse_json_chapters(data, "http://site.test/", config, {"api": "http://api.site.test"})
    assert [(c.key, str(c.number), c.url) for c in parsed.chapters] == [
        ("crimson-tide/chapter-1", "1", "http://api.site.test/api/chapter?chapterId=6"),
        ("crimson-tide/chapter-2", "2", "http://api.site.test/api/chapter?chapterId=7"),
    ]
    assert (parsed.items, parsed.skipped) == (4, 2)
    assert parsed.chapters[0].published_at == dt.datetime(2026, 11, 12, 10, tzinfo=dt.UTC)


def test_an_image_url_template_joins_a_captured_host_and_each_attribute():
    config = HtmlSourceConfig.from_settings(
        {
            "list_url": "/latest/?p={page}",
            "list_anchor": "a",
            "title": "h1",
            "chapter_item": "#chapters > a",
            "page_image": "#pages > img[uid]",
            "image_attrs": ["uid"],
            "page_captures": {"cdn": r"re:realUrl\s*=\s*`(https?://[^/`]+)"},
            "page_image_url": "{cdn}/uploads/{value}",
        },
        source_id="s",
    )
    html = "<script>let realUrl = `https://cdn.site.test/${x}`;</script><div id='pages'><img uid='ab12'></div>"
    assert parse_page_images(html, "https://site.test/chapter/1", config) == ["https://cdn.site.test/uploads/ab12"]


def test_dates_in_the_sites_zone_are_stored_in_utc():
    zone = utc_offset("+07:00")
    assert zone is not None and utc_offset("GMT+7") == zone and utc_offset("+25:00") is None
    read = parse_date("14:05 - 23/11/2026", formats=["%H:%M - %d/%m/%Y"], zone=zone)
    assert read == dt.datetime(2026, 11, 23, 7, 5, tzinfo=dt.UTC)


def test_the_api_sibling_keeps_scheme_and_port():
    assert sibling_api_origin("https://www.example.com/x") == "https://api.example.com"
    assert sibling_api_origin("http://example.com:8080") == "http://api.example.com:8080"


def test_a_json_answer_is_told_from_a_page():
    assert decode_answer('{"a": 1}', "text/html") == {"a": 1}
    with pytest.raises(NotJson):
        decode_answer("<html></html>", "text/html")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"list_anchor": "$.posts[*"}, "settings key 'list_anchor' is not a valid JSONPath"),
        ({"list_link": None}, "settings key 'list_link' is required when list_anchor is a JSONPath"),
        ({"list_title": "@title"}, "settings key 'list_title' must read each JSON item when list_anchor is a JSONPath"),
        ({"list_link": "/series/{slug}"}, "settings key 'list_link' has an unknown placeholder {slug}"),
        ({"title": "$.post.title | rot13"}, "settings key 'title' is not a valid value spec"),
        ({"detail_captures": {"Label": "re:(x)"}}, "settings key 'detail_captures' has a bad name 'Label'"),
        ({"detail_captures": {"label": "re:x"}}, "settings key 'detail_captures' ['label'] is not a valid value spec"),
        ({"chapter_list_url": "/c/{label}"}, "settings key 'chapter_list_url' has an unknown placeholder {label}"),
        ({"list_url": "/q?start={start_index}"}, "settings key 'list_url' uses {offset} or {start_index}"),
        ({"list_page_size": 0}, "settings key 'list_page_size' must be a whole number between 1 and 1000"),
        ({"date_utc_offset": "Asia/Saigon"}, "settings key 'date_utc_offset' must be an offset from UTC"),
        ({"api_base": "api.example.com"}, "settings key 'api_base' must be an absolute http(s) URL"),
        ({"gate_body": {"adult": "true"}}, "settings key 'gate_body' needs gate_url"),
        ({"page_image_url": "{cdn}/{value}"}, "settings key 'page_image_url' has an unknown placeholder {cdn}"),
        ({"chapter_skip": []}, "settings key 'chapter_skip' must be a value spec or a non-empty list"),
    ],
)
def test_an_operators_mistake_names_the_key(change, message):
    with pytest.raises(SourceConfigError) as caught:
        json_config(**change)
    assert message in str(caught.value)


def test_a_json_list_in_the_sites_own_order_is_walked_newest_first():
    config = HtmlSourceConfig.from_settings({"preset": "pizzareader"}, source_id="s")
    data = {
        "comics": [
            {"title": "A", "url": "/comics/a", "last_chapter": {"published_on": "2026-11-02T00:00:00.000000Z"}},
            {"title": "B", "url": "/comics/b"},
            {"title": "C", "url": "/comics/c", "last_chapter": {"published_on": "2026-12-01T10:00:00.000000Z"}},
        ]
    }
    refs, _ = parse_json_list(data, "http://site.test/api/comics", config, {})
    assert [r.key for r in refs] == ["c", "a", "b"]
