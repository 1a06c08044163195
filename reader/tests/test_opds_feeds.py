"""OPDS 1.2 feeds: every kind validates against the OPDS RelaxNG schema; content, order, paging, PSE, queries."""

from __future__ import annotations

import io
import re

import pytest
from django.db import connection
from django.utils import timezone
from lxml import etree
from PIL import Image

from catalog.models import Bookmark, Manga
from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, assert_valid_opds, basic
from testsupport.responses import body_of

pytestmark = pytest.mark.sqlite_ok  # nothing here depends on PostgreSQL

NS = {"a": "http://www.w3.org/2005/Atom", "pse": "http://vaemendis.net/opds-pse/ns", "dc": "http://purl.org/dc/terms/"}
PSE_COUNT = "{http://vaemendis.net/opds-pse/ns}count"
PSE_LAST = "{http://vaemendis.net/opds-pse/ns}lastRead"


@pytest.fixture
def src(db):
    return f.source("demo", language="ja", reading_direction="rtl")


@pytest.fixture
def get(client, alice):
    def fetch(url: str, **params):
        response = client.get(url, params, **basic("alice", PASSWORD))
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return response

    return fetch


def links(doc, rel: str) -> list:
    return doc.xpath(f"a:link[@rel='{rel}']", namespaces=NS)


def test_root_is_a_valid_navigation_feed_linking_every_section_and_search(get, opds_schema):
    response = get("/opds/")
    assert response["Content-Type"].startswith("application/atom+xml;profile=opds-catalog;kind=navigation")
    doc = assert_valid_opds(opds_schema, response.content)
    titles = doc.xpath("a:entry/a:title/text()", namespaces=NS)
    assert titles == ["Latest updates", "All mangas", "My bookmarks", "Tags"]
    search = links(doc, "search")[0]
    assert search.get("type") == "application/opensearchdescription+xml"
    assert links(doc, "start")[0].get("href") == "http://testserver/opds/"


def test_opensearch_description_has_a_search_terms_template_to_a_valid_feed(get, opds_schema, src):
    f.manga("Berserk", src=src)
    f.manga("Yotsuba", src=src)
    body = get("/opds/opensearch.xml")
    assert body["Content-Type"].startswith("application/opensearchdescription+xml")
    doc = etree.fromstring(body.content)
    url = doc.find("{http://a9.com/-/spec/opensearch/1.1/}Url")
    template = url.get("template")
    assert template == "http://testserver/opds/search/?q={searchTerms}"
    assert url.get("type").endswith("kind=navigation")
    results = assert_valid_opds(
        opds_schema, get(template.replace("{searchTerms}", "bers").replace("http://testserver", "")).content
    )
    assert results.xpath("a:entry/a:title/text()", namespaces=NS) == ["Berserk"]


def test_latest_all_tags_and_tag_feeds_are_valid_and_ordered(get, opds_schema, src):
    now = timezone.now()
    old = f.manga("Alpha", tags=("action",), src=src, latest_chapter_at=now - timezone.timedelta(days=2), cover=True)
    new = f.manga("Zeta", tags=("action", "drama"), src=src, latest_chapter_at=now)
    f.manga("Middle", src=src)
    latest = assert_valid_opds(opds_schema, get("/opds/latest/").content)
    assert latest.xpath("a:entry/a:title/text()", namespaces=NS) == ["Zeta", "Alpha", "Middle"]
    entry = latest.xpath("a:entry", namespaces=NS)[1]
    sub = entry.xpath("a:link[@rel='subsection']", namespaces=NS)[0]
    assert sub.get("href") == f"http://testserver/opds/mangas/{old.id}/"
    assert sub.get("type").endswith("kind=acquisition")
    assert entry.xpath("a:link[@rel='http://opds-spec.org/image/thumbnail']", namespaces=NS)
    everything = assert_valid_opds(opds_schema, get("/opds/all/").content)
    assert everything.xpath("a:entry/a:title/text()", namespaces=NS) == ["Alpha", "Middle", "Zeta"]
    tags = assert_valid_opds(opds_schema, get("/opds/tags/").content)
    assert tags.xpath("a:entry/a:title/text()", namespaces=NS) == ["action", "drama"]
    drama = tags.xpath("a:entry[a:title='drama']/a:link/@href", namespaces=NS)[0]
    tagged = assert_valid_opds(opds_schema, get(drama.replace("http://testserver", "")).content)
    assert tagged.xpath("a:entry/a:title/text()", namespaces=NS) == [new.title]


def test_manga_feed_lists_chapters_in_number_order_with_cbz_pse_cover_and_metadata(get, opds_schema, src, alice):
    m = f.manga("Berserk", tags=("dark", "seinen"), src=src, cover=True, authors=["Kentaro Miura"], description="Guts.")
    c10 = f.chapter(m, "10", src=src, pages=3)
    c2 = f.chapter(m, "2", src=src, pages=2, title="The Brand")
    c105 = f.chapter(m, "10.5", src=src, pages=1)
    f.chapter(m, "11", src=src, pages=0)  # not downloaded: nothing to read yet
    f.chapter(m, "12", src=src, pages=1, dropped_at=timezone.now())
    ReadProgress.objects.create(user=alice, chapter=c10, last_page=2)
    response = get(f"/opds/mangas/{m.id}/")
    assert response["Content-Type"].startswith("application/atom+xml;profile=opds-catalog;kind=acquisition")
    assert_valid_opds(opds_schema, response.content)
    doc = etree.fromstring(response.content)  # unsubstituted: the PSE templates as served
    assert doc.xpath("a:entry/a:title/text()", namespaces=NS) == ["Chapter 2: The Brand", "Chapter 10", "Chapter 10.5"]
    first, tenth, _ = doc.xpath("a:entry", namespaces=NS)
    cbz = first.xpath("a:link[@rel='http://opds-spec.org/acquisition']", namespaces=NS)[0]
    assert cbz.get("type") == "application/vnd.comicbook+zip"
    assert cbz.get("href") == f"http://testserver/opds/chapters/{c2.id}/cbz/"
    stream = first.xpath("a:link[@rel='http://vaemendis.net/opds-pse/stream']", namespaces=NS)[0]
    assert stream.get(PSE_COUNT) == "2"
    # Signed for its reader (mangalord/signed_routes.py): any page of this chapter, for alice, for a while.
    signed_stream = (
        rf"http://testserver/signed/pse/[\w-]+/\d+/{alice.pk}/{c2.id}/\{{pageNumber\}}/\?maxWidth=\{{maxWidth\}}"
    )
    assert re.fullmatch(signed_stream, stream.get("href"))
    assert stream.get(PSE_LAST) is None
    tenth_stream = tenth.xpath("a:link[@rel='http://vaemendis.net/opds-pse/stream']", namespaces=NS)[0]
    assert tenth_stream.get(PSE_LAST) == "2"
    assert tenth_stream.get("{http://vaemendis.net/opds-pse/ns}lastReadDate")
    assert first.xpath("a:author/a:name/text()", namespaces=NS) == ["Kentaro Miura"]
    assert first.xpath("a:category/@term", namespaces=NS) == ["dark", "seinen"]
    assert first.xpath("dc:language/text()", namespaces=NS) == ["ja"]
    assert first.xpath("a:summary/text()", namespaces=NS) == ["Guts."]
    assert first.xpath("a:updated/text()", namespaces=NS)
    assert first.xpath("a:link[@rel='http://opds-spec.org/image']", namespaces=NS)
    assert first.xpath("a:link[@rel='http://opds-spec.org/image/thumbnail']", namespaces=NS)
    assert c105.id


def test_bookmarks_list_mangas_with_unread_chapters_first(get, opds_schema, src, alice):
    read = f.manga("All Read", src=src, latest_chapter_at=timezone.now())
    unread = f.manga("Still Unread", src=src)
    f.manga("Not Bookmarked", src=src)
    done = f.chapter(read, 1, src=src, pages=1)
    f.chapter(unread, 1, src=src, pages=1)
    ReadProgress.objects.create(user=alice, chapter=done, last_page=1, completed=True)
    Bookmark.objects.create(user=alice, manga=read)
    Bookmark.objects.create(user=alice, manga=unread, chapter=unread.chapters.get())
    doc = assert_valid_opds(opds_schema, get("/opds/bookmarks/").content)
    assert doc.xpath("a:entry/a:title/text()", namespaces=NS) == ["Still Unread", "All Read"]


def test_paging_links_are_typed_and_page_size_is_bounded(get, opds_schema, src):
    for n in range(120):
        f.manga(f"Title {n:03d}")
    one = assert_valid_opds(opds_schema, get("/opds/all/").content)
    assert len(one.xpath("a:entry", namespaces=NS)) == 50
    assert not links(one, "previous")
    nxt = links(one, "next")[0]
    assert nxt.get("type").startswith("application/atom+xml;profile=opds-catalog")
    assert nxt.get("href").startswith("http://testserver/opds/all/?page=2&after=")
    three = assert_valid_opds(opds_schema, get("/opds/all/", page=3).content)
    assert len(three.xpath("a:entry", namespaces=NS)) == 20
    assert not links(three, "next")
    assert "page=2&before=" in links(three, "previous")[0].get("href")
    assert links(three, "first")[0].get("type").startswith("application/atom+xml")


def _follow(get, href: str, rel: str) -> list[list[str]]:
    """The entry titles of every page reached by following `rel` links from `href`."""
    pages = []
    while href:
        doc = etree.fromstring(get(href.removeprefix("http://testserver")).content)
        pages.append(doc.xpath("a:entry/a:title/text()", namespaces=NS))
        found = links(doc, rel)
        href = found[0].get("href") if found else ""
    return pages


def test_title_feeds_seek_by_cursor_forwards_and_back_through_equal_titles(get, src):
    # Ties on the title are broken by id, so a page edge inside a run of equal titles loses nothing.
    for n in range(70):
        f.manga(f"Title {n:03d}")
    for _ in range(60):
        f.manga("Same Title")
    forwards = _follow(get, "/opds/all/", "next")
    assert [len(p) for p in forwards] == [50, 50, 30]
    titles = [t for page in forwards for t in page]
    assert titles == sorted(titles) and len(titles) == 130
    ids = [str(m.id) for m in Manga.objects.order_by("title", "id")]
    by_offset = [
        etree.fromstring(get("/opds/all/", page=n).content).xpath("a:entry/a:id/text()", namespaces=NS)
        for n in (1, 2, 3)
    ]
    assert [i.removeprefix("urn:uuid:") for page in by_offset for i in page] == ids
    last = etree.fromstring(get("/opds/all/", page=3).content)
    backwards = _follow(get, links(last, "previous")[0].get("href"), "previous")
    assert backwards == forwards[:2][::-1]


def test_latest_feed_seeks_by_cursor_forwards_and_back_through_ties_and_undated_mangas(get, opds_schema, src):
    """Latest updates page by (latest chapter, arrival, id) cursors: through runs of equal times and across
    from the dated mangas to those with no chapter yet, every manga once and in the offset order."""
    now = timezone.now()
    for n in range(40):
        f.manga(f"Dated {n:03d}", latest_chapter_at=now - timezone.timedelta(hours=n))
    for n in range(45):
        f.manga(f"Tied {n:03d}", latest_chapter_at=now - timezone.timedelta(days=3))
    for n in range(35):
        f.manga(f"Undated {n:03d}")
    Manga.objects.filter(title__startswith="Undated 00").update(created_at=now - timezone.timedelta(days=9))
    first = assert_valid_opds(opds_schema, get("/opds/latest/").content)
    assert "page=2&after=" in links(first, "next")[0].get("href")
    forwards = _follow(get, "/opds/latest/", "next")
    assert [len(p) for p in forwards] == [50, 50, 20]
    by_offset = [
        etree.fromstring(get("/opds/latest/", page=n).content).xpath("a:entry/a:title/text()", namespaces=NS)
        for n in (1, 2, 3)
    ]
    assert forwards == by_offset
    assert len({t for page in forwards for t in page}) == 120
    last_href = "/opds/latest/?" + links(first, "next")[0].get("href").split("?", 1)[1]
    second = etree.fromstring(get(last_href.removeprefix("http://testserver")).content)
    third = etree.fromstring(get(links(second, "next")[0].get("href").removeprefix("http://testserver")).content)
    assert "page=2&before=" in links(third, "previous")[0].get("href")
    backwards = _follow(get, links(third, "previous")[0].get("href"), "previous")
    assert backwards == forwards[:2][::-1]


@pytest.mark.parametrize("cursor", ["not-base64!", "bm90IGpzb24", "WzEsMl0", "WyJ4IiwgInkiLCAieiJd"])
def test_a_latest_cursor_this_server_did_not_write_is_400(client, alice, cursor):
    response = client.get("/opds/latest/", {"page": 2, "after": cursor}, **basic("alice", PASSWORD))
    assert response.status_code == 400
    assert b"cursor" in response.content


@pytest.mark.parametrize("cursor", ["not-base64!", "bm90IGpzb24", "WzEsMl0"])
def test_a_cursor_this_server_did_not_write_is_400(client, alice, cursor):
    response = client.get("/opds/all/", {"page": 2, "after": cursor}, **basic("alice", PASSWORD))
    assert response.status_code == 400
    assert b"cursor" in response.content


@pytest.mark.parametrize("page", ["0", "x", "-1"])
def test_bad_page_is_400(client, alice, page):
    assert client.get("/opds/all/", {"page": page}, **basic("alice", PASSWORD)).status_code == 400


def test_empty_search_is_400_naming_q(client, alice):
    response = client.get("/opds/search/", {"q": ""}, **basic("alice", PASSWORD))
    assert response.status_code == 400
    assert b"q must" in response.content


@pytest.mark.parametrize("url", ["/opds/latest/", "/opds/all/", "/opds/bookmarks/", "/opds/search/?q=T"])
def test_a_feed_page_runs_the_same_queries_for_5_or_50_mangas(client, alice, src, django_assert_num_queries, url):
    for n in range(5):
        Bookmark.objects.create(user=alice, manga=f.manga(f"T{n}", src=src, cover=True))
    client.get("/opds/", **basic("alice", PASSWORD))  # a client's first Basic request also runs authenticate()
    # The page of rows alone: the credential is remembered (no lockout read, no user row); PostgreSQL's search
    # first asks whether any title contains the query.
    expected = 2 if "search" in url and connection.vendor == "postgresql" else 1
    with django_assert_num_queries(expected):
        client.get(url, **basic("alice", PASSWORD))
    for n in range(45):
        Bookmark.objects.create(user=alice, manga=f.manga(f"U{n}", src=src, cover=True))
    with django_assert_num_queries(expected):
        assert (
            len(etree.fromstring(client.get(url, **basic("alice", PASSWORD)).content).xpath("a:entry", namespaces=NS))
            >= 5
        )


def test_manga_feed_queries_do_not_grow_with_chapters(client, alice, src, django_assert_num_queries):
    m = f.manga("Long", src=src, tags=("a", "b"))
    f.chapter(m, 1, src=src, pages=1)
    client.get("/opds/", **basic("alice", PASSWORD))
    # manga, whether its series has other copies, the page of chapters (with source and page counts), the
    # reader's progress, its series' tags (the credential is remembered: no lockout count, no user row)
    with django_assert_num_queries(5):
        client.get(f"/opds/mangas/{m.id}/", **basic("alice", PASSWORD))
    for n in range(2, 30):
        f.chapter(m, n, src=src, pages=1)
    with django_assert_num_queries(5):
        client.get(f"/opds/mangas/{m.id}/", **basic("alice", PASSWORD))


def test_pse_page_streams_the_image_downscales_and_moves_progress_forward_only(client, alice, src):
    m = f.manga("Berserk", src=src)
    ch = f.chapter(m, 1, src=src, pages=3, width=1200, height=1800)
    auth = basic("alice", PASSWORD)
    full = client.get(f"/opds/chapters/{ch.id}/pages/0/", **auth)
    assert full.status_code == 200 and full["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(body_of(full))).size == (1200, 1800)
    small = client.get(f"/opds/chapters/{ch.id}/pages/2/", {"maxWidth": "300"}, **auth)
    assert Image.open(io.BytesIO(body_of(small))).size == (300, 450)
    client.get(f"/opds/chapters/{ch.id}/pages/1/", **auth)  # an earlier page after the last one
    progress = ReadProgress.objects.get(user=alice, chapter=ch)
    assert (progress.last_page, progress.completed) == (3, True)
    assert client.get(f"/opds/chapters/{ch.id}/pages/3/", **auth).status_code == 404
    assert client.get(f"/opds/chapters/{ch.id}/pages/0/", {"maxWidth": "huge"}, **auth).status_code == 400


def test_head_answers_like_get_without_a_body(client, alice, src):
    m = f.manga("Berserk", src=src)
    ch = f.chapter(m, 1, src=src, pages=1)
    auth = basic("alice", PASSWORD)
    for url in ("/opds/", f"/opds/mangas/{m.id}/", f"/opds/chapters/{ch.id}/cbz/", f"/opds/chapters/{ch.id}/pages/0/"):
        got, head = client.get(url, **auth), client.head(url, **auth)
        assert head.status_code == got.status_code == 200, url
        assert head["Content-Type"] == got["Content-Type"]
        body = body_of(head) if head.streaming else head.content
        assert body == b"", url


def test_a_deep_manga_feed_page_computes_page_counts_for_its_own_chapters_only(client, alice, src):
    """Page 2 of a long feed walks the skipped chapters' keys alone: the stored-page and stream-type
    subqueries run for the rows shown, in the same single query."""
    from django.test.utils import CaptureQueriesContext

    m = f.manga("Long", src=src)
    for n in range(1, 54):
        f.chapter(m, n, src=src, pages=1 if n < 53 else 2)
    auth = basic("alice", PASSWORD)
    client.get("/opds/", **auth)
    with CaptureQueriesContext(connection) as queries:
        doc = etree.fromstring(client.get(f"/opds/mangas/{m.id}/", {"page": 2}, **auth).content)
    entries = doc.xpath("a:entry", namespaces=NS)
    assert [e.findtext("a:title", namespaces=NS) for e in entries] == ["Chapter 51", "Chapter 52", "Chapter 53"]
    streams = [e.xpath("a:link[@rel='http://vaemendis.net/opds-pse/stream']", namespaces=NS)[0] for e in entries]
    assert [s.get(PSE_COUNT) for s in streams] == ["1", "1", "2"]
    (chapters,) = [q["sql"] for q in queries if "catalog_chapter" in q["sql"] and "OFFSET" in q["sql"]]
    # The OFFSET walk sits in the key subquery, which reads no page rows; the annotations run outside it.
    outer, keys = chapters.split("IN (SELECT", 1)
    assert "catalog_page" in outer
    assert "catalog_page" not in keys


def test_a_long_manga_feed_seeks_by_cursor_forwards_and_back_through_equal_numbers(
    client, alice, get, opds_schema, src
):
    """A long series' feed pages by (number, arrival, id): chapters that share a number (two releases of one)
    across a page edge each come once, in the order the numbered pages give."""
    m = f.manga("Long", src=src)
    for n in range(1, 101):
        f.chapter(m, n, src=src, pages=1)
    for _ in range(15):
        f.chapter(m, 50, src=src, pages=1)  # fifteen more releases of chapter 50, around the first page's edge
    first = assert_valid_opds(opds_schema, get(f"/opds/mangas/{m.id}/").content)
    assert "page=2&after=" in links(first, "next")[0].get("href")
    forwards = _follow(get, f"/opds/mangas/{m.id}/", "next")
    assert [len(p) for p in forwards] == [50, 50, 15]
    ids = lambda n: etree.fromstring(get(f"/opds/mangas/{m.id}/", page=n).content).xpath(  # noqa: E731
        "a:entry/a:id/text()", namespaces=NS
    )
    by_number = [ids(n) for n in (1, 2, 3)]
    seen = [i for page in by_number for i in page]
    assert len(set(seen)) == 115
    titles = [etree.fromstring(get(f"/opds/mangas/{m.id}/", page=n).content) for n in (1, 2, 3)]
    assert forwards == [t.xpath("a:entry/a:title/text()", namespaces=NS) for t in titles]
    third = etree.fromstring(get(f"/opds/mangas/{m.id}/", page=3).content)
    assert "page=2&before=" in links(third, "previous")[0].get("href")
    assert _follow(get, links(third, "previous")[0].get("href"), "previous") == forwards[:2][::-1]
    bad = client.get(f"/opds/mangas/{m.id}/", {"page": 2, "after": "WzEsMl0"}, **basic("alice", PASSWORD))
    assert bad.status_code == 400 and b"cursor" in bad.content


def test_a_long_manga_feed_seeks_in_reading_order_through_volumes_and_extras(client, alice, get, opds_schema, src):
    """Cursor pages follow the reading order every reader shows: volumes, then chapters printed without one,
    then the extras, so a page edge inside any of them neither drops nor repeats a chapter."""
    from catalog.chapter_order import READING_ORDER
    from reader.naming import chapter_title

    m = f.manga("Volumes", src=src)
    for volume in (2, 1):  # arrival order is not reading order
        for n in range(1, 26):
            f.chapter(m, n, src=src, pages=1, volume=volume)
    for n in range(26, 46):
        f.chapter(m, n, src=src, pages=1)
    for n in range(1, 16):
        f.chapter(m, n, src=src, pages=1, kind="extra", title=f"Side Story {n}")
    forwards = _follow(get, f"/opds/mangas/{m.id}/", "next")
    assert [len(p) for p in forwards] == [50, 35]
    expected = [chapter_title(c) for c in m.chapters.order_by(*READING_ORDER)]
    assert [title for page in forwards for title in page] == expected
    assert expected[0] == "Vol. 1 Chapter 1" and expected[50] == "Chapter 26" and expected[-1] == "Side Story 15"
    last = etree.fromstring(get(f"/opds/mangas/{m.id}/", page=2).content)
    assert_valid_opds(opds_schema, etree.tostring(last))
    assert _follow(get, links(last, "previous")[0].get("href"), "previous") == forwards[:1]
