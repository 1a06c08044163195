"""The html/demo adapter against the live demo site over plain HTTP: the protocol, errors, session cookie, SSRF guard."""

from __future__ import annotations

import io
import logging
import socket

import pytest
from PIL import Image

from catalog.models import Source
from crawler import state_store
from crawler.factory import get_source
from sources.base import SourceChapter, SourceMangaRef
from sources.demo import demo_settings
from sources.errors import CrawlerError, FetchRefused, NotFound, SessionExpired, SourceConfigError, SourceUnavailable

pytestmark = pytest.mark.django_db


def _walk(source) -> list[str]:
    keys, page, has_next = [], 1, True
    while has_next:
        refs, has_next = source.list_page(page)
        keys += [r.key for r in refs]
        page += 1
    return keys


def _read(stream) -> bytes:
    try:
        return b"".join(stream.iter_bytes())
    finally:
        stream.close()


@pytest.fixture
def html_source(demo_site):
    """An `html`-kind row configured by hand with the demo site's selectors (what an operator would do)."""
    return Source.objects.create(
        id="target", name="Target", kind=Source.Kind.HTML, base_url=demo_site.base_url, settings=demo_settings()
    )


@pytest.fixture
def bystander(demo_site_factory):
    """A second local server standing in for an internal host: its request log proves no request reached it."""
    return demo_site_factory(mangas=1)


def test_demo_adapter_walks_every_list_page_newest_first(demo_site, demo_source):
    source = get_source(demo_source)
    assert _walk(source) == [m.key for m in demo_site.catalog]


def test_html_adapter_reads_detail_chapters_and_streams_images_over_http(demo_site, html_source):
    source = get_source(html_source)
    manga = demo_site.catalog[0]
    refs, _ = source.list_page(1)
    assert refs[0] == SourceMangaRef(manga.key, demo_site.url(f"/manga/{manga.key}"), manga.title)
    detail = source.manga_detail(refs[0])
    assert detail.metadata.title == manga.title
    assert detail.metadata.authors == tuple(manga.authors)
    assert detail.cover_url == demo_site.url(f"/img/covers/{manga.key}.{manga.cover_format}")
    assert [(c.key, c.number) for c in detail.chapters] == [(c.key, c.number) for c in manga.chapters]
    urls = source.chapter_pages(detail.chapters[0])
    assert len(urls) == manga.chapters[0].pages and all(u.startswith(demo_site.base_url + "/img/") for u in urls)
    stream = source.open_image(urls[0])
    assert stream.content_type.startswith("image/") and stream.declared_length > 0
    assert Image.open(io.BytesIO(_read(stream))).size == (600, 850)


def test_list_page_logs_the_drop_count_under_markup_drift(demo_site, demo_source, caplog):
    demo_site.faults.markup_drift = True
    with caplog.at_level(logging.WARNING, logger="sources.parsing"):
        refs, _ = get_source(demo_source).list_page(1)
    assert len(refs) == 5
    assert any("dropped 5 anchor(s)" in r.getMessage() for r in caplog.records)


def test_detail_404_raises_not_found(demo_site, demo_source):
    victim = demo_site.catalog[0]
    demo_site.faults.detail_404 = {victim.key}
    with pytest.raises(NotFound):
        get_source(demo_source).manga_detail(SourceMangaRef(victim.key, demo_site.url(f"/manga/{victim.key}"), "x"))


def test_outage_and_a_dead_port_raise_source_unavailable(demo_site, demo_source):
    demo_site.faults.outage = True
    with pytest.raises(SourceUnavailable, match="503"):
        get_source(demo_source).list_page(1)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    Source.objects.filter(id="demo").update(base_url=dead)
    with pytest.raises(SourceUnavailable):
        get_source(Source.objects.get(id="demo")).list_page(1)


def test_login_wall_raises_session_expired(demo_site, demo_source):
    demo_site.faults.login_wall = True
    with pytest.raises(SessionExpired):
        get_source(demo_source).list_page(1)


def test_phpsessid_from_runtime_state_opens_the_site_and_travels_with_image_fetches(demo_site, demo_source, caplog):
    demo_site.require_session = "sess-0123456789"
    with pytest.raises(SessionExpired):
        get_source(demo_source).list_page(1)
    state_store.store_session_cookie("demo", "sess-0123456789")
    with caplog.at_level(logging.DEBUG):
        source = get_source(demo_source)
        refs, _ = source.list_page(1)
        detail = source.manga_detail(refs[0])
        url = source.chapter_pages(detail.chapters[0])[0]
        assert len(_read(source.open_image(url))) > 0
    image_hits = demo_site.hits("/img/")
    assert image_hits and all(hit.cookies == {"PHPSESSID": "sess-0123456789"} for hit in image_hits)
    assert "sess-0123456789" not in caplog.text


def test_image_403_is_a_fetch_error_not_a_session_expiry(demo_site, demo_source):
    # Image hosts answer 403 for a missing Referer or hotlink rules; only the login wall pauses a source.
    chapter = demo_site.catalog[0].chapters[0]
    demo_site.require_session = "sess-1"
    with pytest.raises(CrawlerError, match="answered 403 .the image host refused") as caught:
        get_source(demo_source).open_image(demo_site.url(f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}"))
    assert not isinstance(caught.value, SessionExpired)


def test_off_host_chapter_and_image_urls_are_refused_before_any_request(demo_source, bystander):
    source = get_source(demo_source)
    with pytest.raises(FetchRefused, match="chapter URL"):
        source.chapter_pages(SourceChapter(key="x", number=1, url=bystander.url("/manga/manga-0001")))
    with pytest.raises(FetchRefused, match="image URL"):
        source.open_image(bystander.url("/img/covers/manga-0001.jpeg"))
    with pytest.raises(FetchRefused):
        source.manga_detail(SourceMangaRef("x", bystander.url("/manga/manga-0001"), "x"))
    assert bystander.requests == []


def test_chapter_whose_images_point_off_host_is_refused_whole(demo_site, demo_source, bystander):
    demo_site.faults.offsite_images = bystander.base_url
    source = get_source(demo_source)
    detail = source.manga_detail(source.list_page(1)[0][0])
    with pytest.raises(FetchRefused, match="page image"):
        source.chapter_pages(detail.chapters[0])
    assert bystander.requests == []


def test_redirect_to_another_host_is_refused_before_following_it(demo_site, demo_source, bystander):
    chapter = demo_site.catalog[0].chapters[0]
    demo_site.faults.redirect_images_to = bystander.base_url
    with pytest.raises(FetchRefused, match="redirect target"):
        get_source(demo_source).open_image(demo_site.url(f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}"))
    assert bystander.requests == []


def test_configured_image_host_is_allowed(demo_site, demo_source, bystander):
    demo_source.settings = {"image_hosts": [bystander.base_url.removeprefix("http://")]}
    demo_source.save(update_fields=["settings"])
    chapter = bystander.catalog[0].chapters[0]
    demo_site.faults.redirect_images_to = bystander.base_url
    path = f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}"
    assert len(_read(get_source(demo_source).open_image(demo_site.url(path)))) > 0
    assert [hit.path for hit in bystander.requests] == [path]


def test_connection_cut_mid_image_raises_source_unavailable_while_streaming(demo_site, demo_source):
    chapter = demo_site.catalog[0].chapters[0]
    demo_site.faults.cut_image_mid_body = True
    stream = get_source(demo_source).open_image(demo_site.url(f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}"))
    with pytest.raises(SourceUnavailable, match="broke off"):
        _read(stream)


def test_bad_settings_fail_with_an_error_naming_the_key(demo_site):
    row = Source.objects.create(
        id="bad", name="Bad", kind=Source.Kind.HTML, base_url=demo_site.base_url, settings=demo_settings(list_url="/x")
    )
    with pytest.raises(SourceConfigError, match="'list_url'"):
        get_source(row)
    row.settings = demo_settings(requires_browser=True)
    with pytest.raises(SourceConfigError, match="no browser was given"):
        get_source(row)
    row.base_url = "ftp://example.com/"
    row.settings = demo_settings()
    with pytest.raises(SourceConfigError, match="base_url"):
        get_source(row)


def test_list_page_numbers_start_at_one(demo_source):
    with pytest.raises(ValueError):
        get_source(demo_source).list_page(0)
