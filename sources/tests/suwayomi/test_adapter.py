"""The suwayomi adapter against the stand-in server: the walk, details, chapters, pages, images, and its failures."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from catalog.models import Source
from crawler.factory import get_source
from jobs.worker.circuit import counts_toward_circuit
from sources.errors import NotFound, PermanentError, SourceConfigError, SourceUnavailable
from sources.suwayomi import queries
from sources.suwayomi.failures import SourceNeedsLogin
from testsupport.suwayomi.catalog import HARBOR, NIGHT
from testsupport.suwayomi.server import suwayomi_standin

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]
FAST = {"rate_limit": 200, "burst": 50, "max_concurrency": 8}


def _row(standin, **settings) -> Source:
    settings = {"suwayomi_source": HARBOR.id, **FAST, **settings}
    return Source.objects.create(
        id="harbor", name="Harbor", kind="suwayomi", base_url=standin.base_url, settings=settings
    )


def _walk(source) -> list[str]:
    keys, page, more = [], 1, True
    while more:
        refs, more = source.list_page(page)
        keys += [r.key for r in refs]
        page += 1
    return keys


def test_the_walk_is_the_latest_listing_page_by_page_until_has_next_page_is_false(standin):
    source = get_source(_row(standin))
    assert _walk(source) == [str(m.id) for m in standin.listing(HARBOR.id)]
    assert standin.operations.count("SourceManga") == 3  # 7 mangas, 3 a page
    assert standin.operations.count("SourceById") == 1  # resolved once per adapter, by the server's filter
    assert "Sources" not in standin.operations


def test_a_source_without_latest_is_walked_by_its_popular_listing(standin):
    source = get_source(_row(standin, suwayomi_source="Night Shelf"))
    assert _walk(source) == ["50"]


def test_asking_latest_of_a_source_without_it_names_the_setting(standin):
    source = get_source(_row(standin, suwayomi_source=NIGHT.id, suwayomi_listing="latest"))
    with pytest.raises(SourceConfigError, match="'suwayomi_listing' is 'latest'.*Night Shelf"):
        source.list_page(1)


def test_a_name_in_several_languages_asks_for_suwayomi_lang_and_the_language_picks_one(standin):
    with pytest.raises(SourceConfigError, match=r"several languages .*\(de, en\).*suwayomi_lang"):
        get_source(_row(standin, suwayomi_source="Harbor Scans")).list_page(1)
    Source.objects.all().delete()
    source = get_source(_row(standin, suwayomi_source="harbor scans", suwayomi_lang="en"))
    assert source.resolve_source().id == HARBOR.id


def test_manga_detail_maps_metadata_cover_and_every_kind_of_chapter_number(standin):
    source = get_source(_row(standin))
    refs, _ = source.list_page(1)
    detail = source.manga_detail(refs[0])
    manga = standin.manga(1)
    assert detail.metadata.title == "Crimson Tide"
    assert detail.metadata.authors == ("Author 1", "Artist 1")
    assert detail.metadata.status == "ongoing"
    assert detail.metadata.tags == ("Romance",)
    assert detail.cover_url == f"{standin.base_url}/api/v1/manga/1/thumbnail"
    assert [(c.kind, c.number) for c in detail.chapters] == [
        (c.expected_kind, Decimal(c.expected_number)) for c in manga.chapters
    ]
    notice, fractional, second, _first = detail.chapters
    assert notice.published_at is None  # uploadDate 0: the extension printed no date
    assert second.title == "The Gate"
    moment = manga.chapters[2].upload_date_ms
    assert fractional.published_at is not None
    assert second.published_at == dt.datetime.fromtimestamp(moment / 1000, tz=dt.UTC)
    volume_chapter = source.manga_detail(refs[1]).chapters[0]
    assert (volume_chapter.volume, volume_chapter.number, volume_chapter.title) == (1, Decimal("3.00"), "Home")


def test_a_scanlator_setting_keeps_that_groups_chapters_only(standin):
    source = get_source(_row(standin, suwayomi_scanlator="tide team"))
    refs, _ = source.list_page(1)
    assert [c.number for c in source.manga_detail(refs[0]).chapters] == [2, 1]


def test_pages_are_the_servers_page_endpoint_and_stream_its_bytes(standin):
    source = get_source(_row(standin))
    refs, _ = source.list_page(1)
    chapter = source.manga_detail(refs[0]).chapters[-1]
    urls = source.chapter_pages(chapter)
    assert urls == [f"{standin.base_url}/api/v1/manga/1/chapter/1/page/{n}" for n in range(2)]
    stream = source.open_image(urls[1])
    try:
        assert stream.content_type == "image/png"
        assert b"".join(stream.iter_bytes()) == standin.manga(1).chapters[-1].pages[1]
    finally:
        stream.close()


def test_a_source_not_on_the_server_names_the_extension_and_how_to_install_it(standin):
    with pytest.raises(SourceConfigError) as caught:
        get_source(_row(standin, suwayomi_source="Comic Wharf")).list_page(1)
    message = str(caught.value)
    assert "has no source 'Comic Wharf'" in message
    assert "extension 'Comic Wharf' (eu.kanade.tachiyomi.extension.en.comicwharf) is not installed" in message
    assert "Browse → Extensions → Install" in message


def test_an_unknown_name_says_to_add_an_extension_repository(standin):
    with pytest.raises(SourceConfigError, match="nor an extension of that name.*Extension repositories"):
        get_source(_row(standin, suwayomi_source="Nowhere Comics")).list_page(1)


def test_a_source_that_needs_a_webview_login_is_a_permanent_error_naming_the_source(standin):
    standin.webview_sources.add(HARBOR.id)
    with pytest.raises(SourceNeedsLogin) as caught:
        get_source(_row(standin)).list_page(1)
    assert isinstance(caught.value, PermanentError) and not counts_toward_circuit(caught.value)
    assert "'Harbor Scans (EN)'" in str(caught.value) and "Log in via WebView" in str(caught.value)


def test_suwayomi_down_is_an_outage_the_circuit_breaker_counts(standin):
    source = get_source(_row(standin))
    standin.down = True
    with pytest.raises(SourceUnavailable, match="503") as caught:
        source.list_page(1)
    assert counts_toward_circuit(caught.value)


def test_a_server_that_is_not_listening_is_an_outage(standin):
    row = _row(standin)
    standin.stop()
    with pytest.raises(SourceUnavailable):
        get_source(row).list_page(1)


def test_a_manga_url_that_is_not_the_servers_is_not_found(standin):
    from sources.base import SourceMangaRef

    with pytest.raises(NotFound):
        get_source(_row(standin)).manga_detail(SourceMangaRef("x", f"{standin.base_url}/other/x", "X"))


@pytest.mark.parametrize("mode", ["basic", "login"])
def test_credentials_reach_a_server_with_auth_on(mode):
    with suwayomi_standin(auth=mode) as standin:
        source = get_source(_row(standin, suwayomi_auth=mode, suwayomi_username="reader", suwayomi_password="secret"))
        refs, _ = source.list_page(1)
        chapter = source.manga_detail(refs[0]).chapters[-1]
        stream = source.open_image(source.chapter_pages(chapter)[0])
        try:
            assert b"".join(stream.iter_bytes()) == standin.manga(1).chapters[-1].pages[0]
        finally:
            stream.close()
        assert ("Login" in standin.operations) is (mode == "login")
        assert standin.invalid == []


def test_an_expired_login_token_is_asked_again_once():
    with suwayomi_standin(auth="login") as standin:
        row = _row(standin, suwayomi_auth="login", suwayomi_username="reader", suwayomi_password="secret")
        source = get_source(row)
        source.list_page(1)
        standin.expire_tokens()
        refs, _ = source.list_page(2)
        assert [r.key for r in refs] == ["4", "5", "6"]
        assert standin.operations.count("Login") == 2


def test_a_server_with_auth_on_and_no_credentials_names_the_settings_keys():
    with suwayomi_standin(auth="basic") as standin:
        with pytest.raises(SourceConfigError, match="set suwayomi_username and suwayomi_password"):
            get_source(_row(standin)).list_page(1)


def test_wrong_credentials_name_the_settings_keys():
    with suwayomi_standin(auth="login") as standin:
        row = _row(standin, suwayomi_auth="login", suwayomi_username="reader", suwayomi_password="wrong")
        with pytest.raises(SourceConfigError, match="refused the login of suwayomi_username 'reader'"):
            get_source(row).list_page(1)


def test_an_id_the_server_lacks_says_to_install_its_extension_or_pick_a_listed_id(standin):
    with pytest.raises(SourceConfigError, match="no installed extension has a source of that id"):
        get_source(_row(standin, suwayomi_source="42")).list_page(1)


def test_a_server_of_the_oldest_recorded_schema_is_listed_and_crawled_alike():
    from sources.suwayomi.adapter import server_sources
    from sources.suwayomi.schema import OLDEST
    from testsupport.suwayomi.server import LEGACY_VERSION

    with suwayomi_standin(version=OLDEST) as standin:
        version, found = server_sources(standin.base_url)
        assert (version, len(found)) == (LEGACY_VERSION, 3)  # `about`, asked after `aboutServer` was refused
        source = get_source(_row(standin))
        assert _walk(source) == [str(m.id) for m in standin.listing(HARBOR.id)]
        refs, _ = source.list_page(1)
        chapter = source.manga_detail(refs[0]).chapters[-1]
        assert len(source.chapter_pages(chapter)) == 2
        assert [doc for doc, _ in standin.invalid] == [queries.ABOUT]
        standin.invalid.clear()


def test_a_suwayomi_server_on_an_inside_address_is_refused_unless_a_setting_names_its_network(standin, settings):
    from sources.errors import FetchRefused

    settings.OUTBOUND_ALLOWED_NETWORKS = ()  # the production default
    with pytest.raises(FetchRefused, match="OUTBOUND_ALLOWED_NETWORKS"):
        get_source(_row(standin)).list_page(1)
    assert standin.operations == []  # refused before any connection
