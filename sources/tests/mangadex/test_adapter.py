"""The mangadex adapter against the stand-in (real HTTP on 127.0.0.1), every exchange checked by the description."""

from __future__ import annotations

import datetime as dt
import json
from contextlib import closing

import pytest
from django.conf import settings as django_settings

from sources.base import SourceChapter, SourceMangaRef
from sources.errors import FetchRefused, SourceCoolingDown
from sources.mangadex.adapter import MangaDexSource
from sources.mangadex.settings import MangaDexSettings
from testsupport.mangadex.catalog import CATALOG, expected, find_chapter


def adapter(standin, **values) -> MangaDexSource:
    settings = MangaDexSettings.from_settings({**standin.settings, **values}, source_id="md")
    return MangaDexSource("md", settings, user_agent=django_settings.MANGADEX_USER_AGENT)


def walk(source: MangaDexSource):
    refs, page = [], 1
    while True:
        found, more = source.list_page(page)
        refs += found
        if not more:
            return refs, page
        page += 1


def test_the_walk_lists_mangas_with_english_chapters_newest_first_across_short_pages(mangadex_standin):
    with closing(adapter(mangadex_standin)) as source:
        refs, pages = walk(source)
    english = [m for m in CATALOG if "en" in m.languages()]
    newest_first = sorted(english, key=lambda m: m.latest_upload(), reverse=True)
    assert [r.key for r in refs] == [m.id for m in newest_first]
    # Newest by any language's upload, as MangaDex orders: The Night Gate's French chapter is the newest of all.
    assert [r.title for r in refs] == ["The Night Gate", "Iron Garden", "Crimson Tide", "Silver Wolf", "Paper Moon"]
    assert pages == 3  # two a page served (list_cap), though 100 were asked
    asked = [e.query for e in mangadex_standin.of("api")]
    assert [q["offset"] for q in asked] == [["0"], ["2"], ["4"]]
    assert all(q["limit"] == ["100"] and q["order[latestUploadedChapter]"] == ["desc"] for q in asked)
    assert all(q["availableTranslatedLanguage[]"] == ["en"] for q in asked)


def test_a_manga_detail_reads_its_whole_feed_and_counts_what_it_skips(mangadex_standin):
    with closing(adapter(mangadex_standin)) as source:
        refs, _ = walk(source)
        detail = source.manga_detail(next(r for r in refs if r.title == "Crimson Tide"))
        notes = source.notes
    crimson = expected()["Crimson Tide"]
    assert [c.key for c in detail.chapters] == [c.id for c in crimson["chapters"]]
    assert [str(c.number) for c in detail.chapters] == ["1", "2", "4", "5.5", "6"]
    assert (notes.external_chapters, notes.unavailable_chapters) == (1, 1)
    meta = detail.metadata
    assert (meta.title, meta.alt_titles, meta.authors, meta.status) == (
        "Crimson Tide",
        (),
        ("Ren Kato", "Yui Sato"),
        "ongoing",
    )
    manga = crimson["manga"]
    assert detail.cover_url == f"{mangadex_standin.uploads.url}/covers/{manga.id}/{manga.cover_file}"
    feeds = [e for e in mangadex_standin.of("api") if e.path.endswith("/feed")]
    assert [e.query["offset"] for e in feeds] == [["0"], ["5"]]  # two feed pages
    assert all(e.query["translatedLanguage[]"] == ["en"] for e in feeds)
    assert all(e.query["includeFuturePublishAt"] == ["0"] for e in feeds)  # chapter 7 is scheduled for later


def test_a_manga_not_met_on_a_list_page_is_fetched_by_id(mangadex_standin):
    manga = next(m for m in CATALOG if m.slug == "yoru-no-mon")
    with closing(adapter(mangadex_standin, title_languages=["fr", "en"], translated_languages=["fr"])) as source:
        detail = source.manga_detail(SourceMangaRef(manga.id, "", ""))
    assert detail.metadata.title == "La Porte de la Nuit"
    assert detail.metadata.description.startswith("Une porte")
    assert [c.title for c in detail.chapters] == ["Crépuscule"]


@pytest.mark.parametrize("saver", [False, True])
def test_pages_come_from_the_at_home_node_and_each_download_is_reported(mangadex_standin, saver):
    chapter_spec = next(m for m in CATALOG if m.slug == "yoru-no-mon").chapters[1]
    with closing(adapter(mangadex_standin, data_saver=saver)) as source:
        chapter = SourceChapter(key=chapter_spec.id, number=chapter_spec.number)
        urls = source.chapter_pages(chapter)
        stored = []
        for url in urls:
            stream = source.open_image(url)
            try:
                stored.append(b"".join(stream.iter_bytes()))
            finally:
                stream.close()
    files = chapter_spec.files(saver)
    assert [u.rsplit("/", 1)[1] for u in urls] == files
    assert f"/{'data-saver' if saver else 'data'}/{chapter_spec.hash}/" in urls[0]
    assert stored == [find_chapter(chapter_spec.id).image(f, saver) for f in files]
    reports = [json.loads(e.body) for e in mangadex_standin.of("report")]
    assert [(r["url"], r["success"], r["bytes"], r["cached"]) for r in reports] == [
        (url, True, len(data), index % 2 == 0) for index, (url, data) in enumerate(zip(urls, stored, strict=True))
    ]
    agents = {e.headers.get("user-agent") for e in mangadex_standin.exchanges}
    assert agents == {django_settings.MANGADEX_USER_AGENT}


def test_a_failed_at_home_image_is_reported_as_a_failure(mangadex_standin):
    with closing(adapter(mangadex_standin)) as source:
        url = f"{mangadex_standin.at_home.url}/standin-token/data/{'0' * 32}/x1-missing.png"
        with pytest.raises(Exception, match="404"):
            source.open_image(url)
    [report] = [json.loads(e.body) for e in mangadex_standin.of("report")]
    assert (report["url"], report["success"], report["bytes"]) == (url, False, 0)


def test_covers_from_the_uploads_host_are_not_reported(mangadex_standin):
    manga = CATALOG[0]
    with closing(adapter(mangadex_standin)) as source:
        stream = source.open_image(f"{mangadex_standin.uploads.url}/covers/{manga.id}/{manga.cover_file}")
        try:
            assert b"".join(stream.iter_bytes()) == manga.cover
        finally:
            stream.close()
    assert mangadex_standin.of("report") == []


def test_a_rate_limit_answer_cools_the_source_down_until_the_reset_it_names(mangadex_standin):
    mangadex_standin.throttle_next, mangadex_standin.throttle_secs = 1, 30
    with closing(adapter(mangadex_standin)) as source, pytest.raises(SourceCoolingDown) as caught:
        source.list_page(1)
    assert "429" in str(caught.value)
    left = (caught.value.until - dt.datetime.now(dt.UTC)).total_seconds()
    assert 25 < left <= 31


def test_an_at_home_node_off_the_allowed_hosts_is_refused_before_any_image_is_asked(mangadex_standin):
    chapter = CATALOG[0].chapters[0]
    with closing(adapter(mangadex_standin, at_home_hosts=["*.mangadex.network"])) as source:
        with pytest.raises(FetchRefused, match="page image of chapter"):
            source.chapter_pages(SourceChapter(key=chapter.id, number=chapter.number))
    assert mangadex_standin.of("at_home") == []


def test_an_image_left_unread_is_reported_as_not_loaded(mangadex_standin):
    chapter = CATALOG[0].chapters[0]
    with closing(adapter(mangadex_standin)) as source:
        url = source.chapter_pages(SourceChapter(key=chapter.id, number=chapter.number))[0]
        stream = source.open_image(url)
        next(iter(stream.iter_bytes()))
        stream.close()
    [report] = [json.loads(e.body) for e in mangadex_standin.of("report")]
    assert (report["url"], report["success"]) == (url, False)
