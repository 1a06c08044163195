"""OPDS over series: every list shows a series once (its lead), found, tagged and bookmarked through any copy; a
series' feed lists its chapters once per chapter key from the preferred copy, each with its own progress; a copy's
URL answers with its lead's feed. Every feed validates against the OPDS 1.2 RelaxNG schema."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test import Client
from lxml import etree

from catalog import series as service
from catalog.models import Bookmark, Manga, Tag
from reader.models import ReadProgress
from reader.progress import set_progress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, assert_valid_opds, basic

pytestmark = pytest.mark.sqlite_ok

NS = {"a": "http://www.w3.org/2005/Atom"}
ALICE = basic("alice", PASSWORD)
STREAM = "a:link[@rel='http://vaemendis.net/opds-pse/stream']"
PSE_LAST = "{http://vaemendis.net/opds-pse/ns}lastRead"


@pytest.fixture
def tide(db, settings):
    """ "The Tide" on alpha (chapters 1-3) and beta (2-4, another title, an alternative title, another tag), merged;
    "Zeta" alone on alpha."""
    settings.SERIES_SOURCE_PRIORITY = ["alpha", "beta"]
    alpha, beta = f.source("alpha"), f.source("beta")
    a = f.manga("The Tide", src=alpha, tags=("drama",), cover=True, description="The sea.")
    b = f.manga("Tide Beyond", src=beta, tags=("action",), alt_titles=["Shio no Koe"])
    zeta = f.manga("Zeta", src=alpha, tags=("drama",))
    chapters = {f"a{n}": f.chapter(a, n, src=alpha, pages=2) for n in (1, 2, 3)}
    chapters |= {f"b{n}": f.chapter(b, n, src=beta, pages=3) for n in (2, 3, 4)}
    chapters["z1"] = f.chapter(zeta, 1, src=alpha, pages=1)
    service.merge_series(a.series, [b.series], via="test")
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.leads_series and not b.leads_series
    return {"a": a, "b": b, "zeta": zeta, **chapters}


def _doc(client: Client, url: str, schema, **params) -> etree._Element:
    response = client.get(url, params, **ALICE)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    return assert_valid_opds(schema, response.content)


def _titles(doc: etree._Element) -> list[str]:
    return doc.xpath("a:entry/a:title/text()", namespaces=NS)


def _ids(doc: etree._Element) -> list[str]:
    return [i.removeprefix("urn:uuid:") for i in doc.xpath("a:entry/a:id/text()", namespaces=NS)]


def test_all_and_latest_list_each_series_once_by_its_lead(client, alice, tide, opds_schema):
    everything = _doc(client, "/opds/all/", opds_schema)
    assert _titles(everything) == ["The Tide", "Zeta"]
    assert _ids(everything) == [str(tide["a"].id), str(tide["zeta"].id)]
    assert set(_ids(_doc(client, "/opds/latest/", opds_schema))) == {str(tide["a"].id), str(tide["zeta"].id)}


def test_a_tag_feed_lists_a_series_one_of_whose_copies_carries_the_tag(client, alice, tide, opds_schema):
    action = Tag.objects.get(name="action")  # only beta's copy carries it
    assert _titles(_doc(client, f"/opds/tags/{action.id}/", opds_schema)) == ["The Tide"]
    drama = Tag.objects.get(name="drama")
    tide["b"].tags.add(drama)  # both copies tagged: still once
    assert _titles(_doc(client, f"/opds/tags/{drama.id}/", opds_schema)) == ["The Tide", "Zeta"]


def test_search_finds_a_series_by_any_copys_title_and_shows_its_lead_once(client, alice, tide, opds_schema):
    assert _titles(_doc(client, "/opds/search/", opds_schema, q="Beyond")) == ["The Tide"]  # beta's title
    assert _titles(_doc(client, "/opds/search/", opds_schema, q="Tide")) == ["The Tide"]  # both copies match
    if connection.vendor == "postgresql":  # alternative titles are searched where the trigram columns are
        assert _titles(_doc(client, "/opds/search/", opds_schema, q="shio no")) == ["The Tide"]


def test_bookmarks_show_a_series_once_whichever_copy_is_bookmarked_unread_until_every_key_is_read(
    client, alice, tide, opds_schema
):
    Bookmark.objects.create(user=alice, manga=tide["b"])  # the copy, not the lead
    doc = _doc(client, "/opds/bookmarks/", opds_schema)
    assert _ids(doc) == [str(tide["a"].id)]
    assert doc.xpath("a:entry/a:content/text()", namespaces=NS) == ["New chapters to read."]
    Bookmark.objects.create(user=alice, manga=tide["a"], chapter=tide["a1"])
    assert _ids(_doc(client, "/opds/bookmarks/", opds_schema)) == [str(tide["a"].id)]
    for shown in ("a1", "a2", "a3", "b4"):  # read from the shown copies: their twins are read too
        set_progress(user=alice, chapter=tide[shown], last_page=2, completed=True)
    doc = _doc(client, "/opds/bookmarks/", opds_schema)
    assert doc.xpath("a:entry/a:content/text()", namespaces=NS) == ["All read."]


def test_a_series_feed_lists_each_chapter_key_once_from_the_preferred_copy_with_its_own_progress(
    client, alice, tide, opds_schema
):
    ReadProgress.objects.create(user=alice, chapter=tide["a2"], last_page=1)
    doc = _doc(client, f"/opds/mangas/{tide['a'].id}/", opds_schema)
    assert _titles(doc) == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"]
    assert _ids(doc) == [str(tide[k].id) for k in ("a1", "a2", "a3", "b4")]
    streams = [entry.xpath(STREAM, namespaces=NS)[0] for entry in doc.xpath("a:entry", namespaces=NS)]
    assert [s.get("{http://vaemendis.net/opds-pse/ns}count") for s in streams] == ["2", "2", "2", "3"]
    assert [s.get(PSE_LAST) for s in streams] == [None, "1", None, None]
    assert f"/{tide['b4'].id}/" in streams[3].get("href")  # beta's copy streams its own pages
    assert doc.xpath("a:entry/a:content/text()", namespaces=NS) == ["From Alpha."] * 3 + ["From Beta."]
    # the series' tags, from every copy
    assert doc.xpath("a:entry[1]/a:category/@term", namespaces=NS) == ["action", "drama"]


def test_a_copys_feed_is_its_leads_feed(client, alice, tide, opds_schema):
    lead = _doc(client, f"/opds/mangas/{tide['a'].id}/", opds_schema)
    copy = _doc(client, f"/opds/mangas/{tide['b'].id}/", opds_schema)
    assert copy.findtext("a:id", namespaces=NS) == f"urn:uuid:{tide['a'].id}"
    assert copy.findtext("a:title", namespaces=NS) == "The Tide"
    assert _ids(copy) == _ids(lead)


def test_a_series_of_one_manga_shows_its_own_downloaded_chapters_as_before(client, alice, tide, opds_schema):
    f.chapter(tide["zeta"], 2, src=Manga.objects.get(pk=tide["zeta"].pk).sources.get().source)  # not downloaded
    doc = _doc(client, f"/opds/mangas/{tide['zeta'].id}/", opds_schema)
    assert _ids(doc) == [str(tide["z1"].id)]


@pytest.mark.parametrize(
    "url",
    [
        f"/opds/mangas/{uuid.uuid4()}/",
        "/opds/mangas/not-a-uuid/",
        f"/opds/mangas/{'f' * 5000}/",
        "/opds/tags/99999999/",
        "/opds/tags/99999999999999999999999/",
    ],
)
def test_hostile_ids_are_404(client, alice, tide, url):
    assert client.get(url, **ALICE).status_code == 404


def test_a_nul_byte_in_a_series_id_is_a_400_that_changes_nothing(client, alice, tide):
    assert client.get("/opds/mangas/%00/", **ALICE).status_code == 400
    assert not ReadProgress.objects.exists()


@pytest.mark.parametrize("public", [False, True])
def test_who_reads_a_series_feed_owner_reader_and_stranger(client, tide, alice, django_user_model, settings, public):
    """The owner and a plain reader always; a stranger only while the library is opened to the public."""
    settings.LIBRARY_PUBLIC_READ = public
    django_user_model.objects.create_superuser("owner", "owner@example.com", "owner-password")
    urls = ["/opds/all/", f"/opds/mangas/{tide['b'].id}/", "/opds/search/?q=Beyond"]
    for url in urls:
        assert client.get(url, **basic("owner", "owner-password")).status_code == 200
        assert client.get(url, **ALICE).status_code == 200
        stranger = Client().get(url)
        assert stranger.status_code == (200 if public else 401), url
    assert Client().get("/opds/bookmarks/").status_code == 401  # a stranger has no bookmarks, even when public


def test_list_and_series_feed_queries_stay_bounded_with_merged_series(
    client, alice, tide, django_assert_max_num_queries
):
    alpha, beta = tide["a1"].source, tide["b2"].source
    client.get("/opds/", **ALICE)
    for n in range(30):
        first, second = f.manga(f"Pair {n:02d}", src=alpha), f.manga(f"Pair {n:02d}", src=beta)
        Bookmark.objects.create(user=alice, manga=second)
        service.merge_series(first.series, [second.series], via="test")
    for url in ("/opds/all/", "/opds/latest/", "/opds/bookmarks/", "/opds/search/?q=Pair"):
        with django_assert_max_num_queries(2):
            doc = etree.fromstring(client.get(url, **ALICE).content)
        assert len(doc.xpath("a:entry", namespaces=NS)) >= 30, url
    # lead, whether merged, the series and its chapters (the union), the page, progress, tags
    with django_assert_max_num_queries(7):
        client.get(f"/opds/mangas/{tide['a'].id}/", **ALICE)
    for n in range(5, 40):
        f.chapter(tide["b"], n, src=beta, pages=1)
    with django_assert_max_num_queries(7):
        doc = etree.fromstring(client.get(f"/opds/mangas/{tide['a'].id}/", **ALICE).content)
    assert len(doc.xpath("a:entry", namespaces=NS)) == 39


def test_title_cursors_seek_through_leads_only(client, alice, db, settings, opds_schema):
    alpha, beta = f.source("alpha"), f.source("beta")
    for n in range(60):
        first, second = f.manga(f"Title {n:03d}", src=alpha), f.manga(f"Title {n:03d}", src=beta)
        service.merge_series(first.series, [second.series], via="test")
    first = _doc(client, "/opds/all/", opds_schema)
    href = first.xpath("a:link[@rel='next']/@href", namespaces=NS)[0].removeprefix("http://testserver")
    second = assert_valid_opds(opds_schema, client.get(href, **ALICE).content)
    titles = _titles(first) + _titles(second)
    assert titles == [f"Title {n:03d}" for n in range(60)]
    leads = set(Manga.objects.filter(leads_series=True).values_list("id", flat=True))
    assert {uuid.UUID(i) for i in _ids(first) + _ids(second)} == leads
