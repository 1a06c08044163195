"""The JSON capabilities through the adapter, against the family fixture sites: paging, captures, guard, gate."""

from __future__ import annotations

import pytest

from sources.config import HtmlSourceConfig
from sources.errors import FetchRefused
from sources.html import HtmlSource
from testsupport.theme_sites.foolslide import FoOlSlideSite
from testsupport.theme_sites.iken import IkenSite
from testsupport.theme_sites.zeistmanga import ZeistMangaSite

pytestmark = pytest.mark.sqlite_ok


def source(site, **settings) -> HtmlSource:
    return HtmlSource("s", site.base_url, HtmlSourceConfig.from_settings(settings, source_id="s"))


@pytest.fixture
def zeist():
    site = ZeistMangaSite()
    yield site
    site.stop()


def test_a_start_index_list_walks_pages_until_the_stated_total(zeist):
    feed = "/feeds/posts/default/-/Series?alt=json&orderby=published&start-index={start_index}&max-results=2"
    adapter = source(zeist, preset="zeistmanga", list_url=feed, list_page_size=2)
    try:
        pages = [adapter.list_page(n) for n in (1, 2, 3)]
    finally:
        adapter.close()
    assert [([r.key for r in refs], more) for refs, more in pages] == [
        (["crimson-tide", "silver-wolf"], True),
        (["quiet-harbor", "iron-garden"], True),
        (["paper-moon"], False),
    ]
    starts = [r.query["start-index"] for r in zeist.server.hits("GET", "/feeds/posts/default/-/Series")]
    assert starts == ["1", "3", "5"]


def test_a_chapter_list_of_several_requests_is_read_whole_with_the_captured_label(zeist):
    chapters = "/feeds/posts/default/-/Chapter/{label}?alt=json&start-index={start_index}&max-results=2"
    adapter = source(zeist, preset="zeistmanga", chapter_list_url=chapters, chapter_list_page_size=2)
    try:
        refs, _ = adapter.list_page(1)
        detail = adapter.manga_detail(refs[0])
    finally:
        adapter.close()
    assert [str(c.number) for c in detail.chapters] == ["1", "2", "3"]
    asked = zeist.server.hits("GET", "/feeds/posts/default/-/Chapter/")
    assert [(r.path, r.query["start-index"]) for r in asked] == [
        ("/feeds/posts/default/-/Chapter/Crimson%20Tide", "1"),
        ("/feeds/posts/default/-/Chapter/Crimson%20Tide", "3"),
    ]


def test_the_api_sibling_is_allowed_only_beside_the_site():
    config = HtmlSourceConfig.from_settings({"preset": "iken"}, source_id="s")
    adapter = HtmlSource("s", "https://www.example.com", config)
    try:
        assert adapter.api == "https://api.example.com"
        assert adapter.guard.allows("https://api.example.com/api/query?page=1")
        with pytest.raises(FetchRefused):
            adapter.guard.check("https://api.evil.example/api/query")
    finally:
        adapter.close()


def test_a_site_that_serves_its_own_api_is_read_there_and_its_locked_chapters_skipped():
    site = IkenSite()
    adapter = source(site, preset="iken", api_base="{base}")
    try:
        refs, more = adapter.list_page(1)
        detail = adapter.manga_detail(refs[0])
        pages = adapter.chapter_pages(detail.chapters[0])
    finally:
        adapter.close()
        site.stop()
    assert (len(refs), more) == (5, False)
    assert [c.key for c in detail.chapters] == [f"crimson-tide/chapter-{n}" for n in (1, 2, 3)]
    # The API lists the images last first: their "order" puts them back.
    assert [p.rsplit("/", 1)[-1] for p in pages] == ["1.png", "2.png", "3.png"]


def test_the_adult_gate_is_posted_once_before_the_first_page():
    site = FoOlSlideSite()
    adapter = source(site, preset="foolslide")
    try:
        refs, _ = adapter.list_page(1)
        adapter.manga_detail(refs[0])
    finally:
        adapter.close()
        site.stop()
    assert [(r.method, r.path, r.form) for r in site.server.requests[:2]] == [
        ("POST", "/latest/1/", {"adult": "true"}),
        ("GET", "/latest/1/", {}),
    ]
    assert len(site.server.hits("POST", "/")) == 1
