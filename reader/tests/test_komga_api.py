"""The Komga-compatible API, driven the way Mihon's Komga extension and tracker drive it.

Every JSON answer is validated against the operation's response schema in
Komga's published OpenAPI description (reader/tests/schemas/komga/).
"""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.http import QueryDict
from django.test import Client
from django.utils import timezone
from PIL import Image

from catalog.models import Chapter, Manga
from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from reader.tests.komga_schema import MIHON_PAGE_FIELDS, assert_komga_valid
from testsupport.responses import body_of

ALICE = basic("alice", PASSWORD)


@pytest.fixture
def library(db, alice):
    demo, other = f.source("demo"), f.source("target", reading_direction="rtl", language="ja")
    berserk = f.manga("Berserk", src=demo, tags=("dark", "action"), cover=True, authors=["Kentaro Miura"])
    berserk.status = Manga.Status.ONGOING
    berserk.save(update_fields=["status"])
    chapters = [f.chapter(berserk, n, src=demo, pages=3, published_at=timezone.now()) for n in (1, 2, "2.5")]
    f.chapter(berserk, 3, src=demo)  # listed by the source, not downloaded yet
    vagabond = f.manga("Vagabond", src=other, tags=("action",), authors=["Takehiko Inoue"], status="completed")
    f.chapter(vagabond, 1, src=other, pages=2)
    f.manga("Zero Chapters", src=demo)
    now = timezone.now()
    Manga.objects.filter(pk=vagabond.pk).update(latest_chapter_at=now, created_at=now - timedelta(days=3))
    Manga.objects.filter(pk=berserk.pk).update(latest_chapter_at=now - timedelta(days=1))
    return {"berserk": berserk, "vagabond": vagabond, "chapters": chapters}


def _get(client: Client, url: str, path: str, **extra):
    response = client.get(url, **ALICE, **extra)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert_komga_valid(path, "get", body)
    return body


def _titles(page: dict) -> list[str]:
    for key in MIHON_PAGE_FIELDS:
        assert key in page, key
    return [s["metadata"]["title"] for s in page["content"]]


def test_mihon_waits_for_the_basic_challenge_then_browses(client, library):
    first = client.get("/api/v1/series?search=&page=0&deleted=false")
    assert first.status_code == 401 and first["WWW-Authenticate"].startswith("Basic ")
    page = _get(client, "/api/v1/series?search=&page=0&deleted=false", "/api/v1/series")
    assert _titles(page) == ["Vagabond", "Berserk", "Zero Chapters"]  # latest chapter first
    assert (page["totalElements"], page["totalPages"], page["number"], page["first"], page["last"]) == (
        3,
        1,
        0,
        True,
        True,
    )


def test_filter_lists_answer_what_the_extension_parses(client, library):
    libraries = _get(client, "/api/v1/libraries", "/api/v1/libraries")
    assert {(lib["id"], lib["name"]) for lib in libraries} == {("demo", "Demo"), ("target", "Target")}
    assert _get(client, "/api/v1/libraries/demo", "/api/v1/libraries/{libraryId}")["id"] == "demo"
    assert _get(client, "/api/v1/collections?unpaged=true", "/api/v1/collections")["content"] == []
    assert _get(client, "/api/v1/readlists", "/api/v1/readlists")["empty"] is True
    assert _get(client, "/api/v1/genres", "/api/v1/genres") == ["action", "dark"]
    assert _get(client, "/api/v1/tags", "/api/v1/tags") == []
    assert _get(client, "/api/v1/publishers", "/api/v1/publishers") == []
    authors = _get(client, "/api/v1/authors", "/api/v1/authors")
    assert authors == [{"name": "Kentaro Miura", "role": "writer"}, {"name": "Takehiko Inoue", "role": "writer"}]
    v2 = _get(client, "/api/v2/authors?search=miura", "/api/v2/authors")
    assert [a["name"] for a in v2["content"]] == ["Kentaro Miura"]
    me = _get(client, "/api/v2/users/me", "/api/v2/users/me")
    assert me["email"] == "alice@example.com" and "ADMIN" not in me["roles"]


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        ("search=berserk", ["Berserk"]),
        ("library_id=target", ["Vagabond"]),
        ("library_id=demo,target&sort=metadata.titleSort,asc", ["Berserk", "Vagabond", "Zero Chapters"]),
        ("status=ENDED", ["Vagabond"]),
        ("status=ONGOING,HIATUS&sort=metadata.titleSort,desc", ["Zero Chapters", "Berserk"]),
        ("genre=dark", ["Berserk"]),
        ("tag=action&sort=metadata.titleSort,asc", ["Berserk", "Vagabond"]),
        ("author=Takehiko Inoue,writer", ["Vagabond"]),
        ("author=Takehiko Inoue,penciller", []),
        ("publisher=Kodansha", []),
        ("sort=createdDate,asc", ["Vagabond", "Berserk", "Zero Chapters"]),
        ("sort=lastModifiedDate,asc", ["Berserk", "Vagabond", "Zero Chapters"]),
        ("deleted=true", []),
        ("sort=metadata.titleSort,asc&size=2&page=1", ["Zero Chapters"]),
    ],
)
def test_browse_filters_and_sorts(client, library, query, titles):
    assert _titles(_get(client, f"/api/v1/series?{query}", "/api/v1/series")) == titles


def test_read_status_filters_follow_the_users_progress(client, library, alice, django_user_model):
    c1, c2, c25 = library["chapters"]
    ReadProgress.objects.create(user=alice, chapter=c1, last_page=3, completed=True)
    ReadProgress.objects.create(user=alice, chapter=c2, last_page=1)
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    ReadProgress.objects.create(user=bob, chapter=c25, last_page=3, completed=True)
    sort = "&sort=metadata.titleSort,asc"
    assert _titles(_get(client, "/api/v1/series?read_status=IN_PROGRESS" + sort, "/api/v1/series")) == ["Berserk"]
    unread = _get(client, "/api/v1/series?read_status=UNREAD&read_status=IN_PROGRESS" + sort, "/api/v1/series")
    assert _titles(unread) == ["Berserk", "Vagabond", "Zero Chapters"]
    ReadProgress.objects.filter(chapter=c2).update(completed=True, last_page=3)
    ReadProgress.objects.create(user=alice, chapter=c25, last_page=3, completed=True)
    assert _titles(_get(client, "/api/v1/series?read_status=READ", "/api/v1/series")) == ["Berserk"]


def test_a_series_page_costs_the_same_queries_whatever_its_size(client, library, alice, django_assert_num_queries):
    src = library["berserk"].sources.first().source
    url = "/api/v1/series?size=50&read_status=UNREAD,IN_PROGRESS,READ"
    session = Client()
    session.force_login(alice)
    session.get(url)  # warm the session and content-type caches

    # session, the page's ids (a page that ends the list needs no count), its series, tags prefetch, which entries
    # are merged series, sources: six whatever the page holds (the user is remembered; a page with merged series
    # reads their chapters in one more)
    with django_assert_num_queries(6):
        assert len(session.get(url).json()["content"]) == 3
    for n in range(12):
        m = f.manga(f"More {n}", src=src, tags=("extra", f"t{n}"), authors=[f"A{n}"])
        f.chapter(m, 1, src=src, pages=1)
    with django_assert_num_queries(6):
        assert len(session.get(url).json()["content"]) == 15


def test_open_a_series_list_its_books_and_read_its_pages(client, library, alice):
    berserk = library["berserk"]
    series = _get(client, f"/api/v1/series/{berserk.id}", "/api/v1/series/{seriesId}")
    assert (series["booksCount"], series["booksUnreadCount"], series["libraryId"]) == (3, 3, "demo")
    assert series["metadata"]["genres"] == ["action", "dark"] and series["metadata"]["status"] == "ONGOING"
    assert series["booksMetadata"]["authors"] == [{"name": "Kentaro Miura", "role": "writer"}]

    books = _get(
        client,
        f"/api/v1/series/{berserk.id}/books?unpaged=true&media_status=READY&deleted=false",
        "/api/v1/series/{seriesId}/books",
    )
    assert [b["metadata"]["numberSort"] for b in books["content"]] == [1.0, 2.0, 2.5]
    assert [b["metadata"]["title"] for b in books["content"]] == ["Chapter 1", "Chapter 2", "Chapter 2.5"]
    assert books["content"][0]["media"]["pagesCount"] == 3 and books["totalElements"] == 3
    everything = _get(
        client, f"/api/v1/series/{berserk.id}/books?sort=metadata.numberSort,desc", "/api/v1/series/{seriesId}/books"
    )
    assert [b["metadata"]["number"] for b in everything["content"]] == ["3", "2.5", "2", "1"]
    assert everything["content"][0]["media"]["status"] == "UNKNOWN"

    book_id = books["content"][1]["id"]
    book = _get(client, f"/api/v1/books/{book_id}", "/api/v1/books/{bookId}")
    assert book["number"] == 2 and book["seriesId"] == str(berserk.id) and "readProgress" not in book
    pages = _get(client, f"/api/v1/books/{book_id}/pages", "/api/v1/books/{bookId}/pages")
    assert [(p["number"], p["fileName"], p["mediaType"], p["width"]) for p in pages] == [
        (1, "0001.png", "image/png", 40),
        (2, "0002.png", "image/png", 40),
        (3, "0003.png", "image/png", 40),
    ]
    image = client.get(f"/api/v1/books/{book_id}/pages/2", **ALICE, HTTP_ACCEPT="image/webp,image/*")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert body_of(image) == Chapter.objects.get(pk=book_id).pages.get(index=1).image.read()
    jpeg = client.get(f"/api/v1/books/{book_id}/pages/1?convert=jpeg", **ALICE)
    assert jpeg["Content-Type"] == "image/jpeg" and body_of(jpeg)[:3] == b"\xff\xd8\xff"
    assert client.get(f"/api/v1/books/{book_id}/pages/0?zero_based=true", **ALICE).status_code == 200
    assert client.get(f"/api/v1/books/{book_id}/pages/4", **ALICE).status_code == 404

    vagabond = library["vagabond"]  # no cover: its first page stands in
    thumbnails = [f"/api/v1/series/{s.id}/thumbnail" for s in (berserk, vagabond)] + [
        f"/api/v1/books/{book_id}/thumbnail"
    ]
    assert (
        client.get(f"/api/v1/series/{Manga.objects.get(title='Zero Chapters').id}/thumbnail", **ALICE).status_code
        == 404
    )
    for url in thumbnails:
        thumb = client.get(url, **ALICE)
        assert thumb.status_code == 200 and thumb["Content-Type"].startswith("image/")
        with Image.open(io.BytesIO(body_of(thumb))) as img:
            assert img.width > 0


def test_progress_through_the_book_and_tracker_endpoints(client, library, alice):
    berserk = library["berserk"]
    c1, c2, c25 = library["chapters"]
    tracker = f"/api/v2/series/{berserk.id}/read-progress/tachiyomi"
    path = "/api/v2/series/{seriesId}/read-progress/tachiyomi"
    start = _get(client, tracker, path)
    assert start == {
        "booksCount": 3,
        "booksReadCount": 0,
        "booksUnreadCount": 3,
        "booksInProgressCount": 0,
        "lastReadContinuousNumberSort": 0.0,
        "maxNumberSort": 2.5,
    }
    patch = client.patch(f"/api/v1/books/{c2.id}/read-progress", {"page": 2}, content_type="application/json", **ALICE)
    assert patch.status_code == 204
    assert ReadProgress.objects.get(user=alice, chapter=c2).last_page == 2
    book = _get(client, f"/api/v1/books/{c2.id}", "/api/v1/books/{bookId}")
    assert (book["readProgress"]["page"], book["readProgress"]["completed"]) == (2, False)

    put = client.put(tracker, {"lastBookNumberSortRead": 2.0}, content_type="application/json", **ALICE)
    assert put.status_code == 204
    assert set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter_id", flat=True)) == {
        c1.id,
        c2.id,
    }
    after = _get(client, tracker, path)
    assert (after["booksReadCount"], after["lastReadContinuousNumberSort"], after["booksUnreadCount"]) == (2, 2.0, 1)

    done = client.patch(
        f"/api/v1/books/{c25.id}/read-progress", {"completed": True}, content_type="application/json", **ALICE
    )
    assert done.status_code == 204
    assert ReadProgress.objects.get(user=alice, chapter=c25).last_page == 3
    series = _get(client, f"/api/v1/series/{berserk.id}", "/api/v1/series/{seriesId}")
    assert (series["booksReadCount"], series["booksUnreadCount"]) == (3, 0)

    assert client.delete(f"/api/v1/books/{c25.id}/read-progress", **ALICE).status_code == 204
    assert not ReadProgress.objects.filter(user=alice, chapter=c25).exists()


def test_bad_input_is_a_400_naming_the_parameter_and_changes_nothing(client, library, alice):
    c1 = library["chapters"][0]
    for url, name in [
        ("/api/v1/series?sort=rating,asc", "sort"),
        ("/api/v1/series?status=FINISHED", "status"),
        ("/api/v1/series?page=-1", "page"),
        ("/api/v1/series?size=0", "size"),
        ("/api/v1/series?author=nobody", "author"),
        (f"/api/v1/books/{c1.id}/pages/1?convert=gif", "convert"),
    ]:
        response = client.get(url, **ALICE)
        assert response.status_code == 400, url
        body = response.json()
        assert_komga_valid("/api/v1/series", "get", body, status=400)
        assert body["violations"][0]["fieldName"] == name
    bad = client.patch(f"/api/v1/books/{c1.id}/read-progress", {"page": 9}, content_type="application/json", **ALICE)
    assert bad.status_code == 400 and bad.json()["violations"][0]["fieldName"] == "page"
    tracker = f"/api/v2/series/{library['berserk'].id}/read-progress/tachiyomi"
    assert (
        client.put(tracker, {"lastBookNumberSortRead": "x"}, content_type="application/json", **ALICE).status_code
        == 400
    )
    assert not ReadProgress.objects.exists()
    assert client.get("/api/v1/series/not-a-uuid", **ALICE).status_code == 404
    assert client.get("/api/v1/books/00000000-0000-0000-0000-000000000000", **ALICE).status_code == 404


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"page": "1", "size": "3"},
        {"page": "2", "size": "3", "sort": "metadata.numberSort,desc"},
        {"size": "4", "sort": "createdDate,desc"},
        {"size": "2", "media_status": "READY"},
        {"size": "2", "read_status": "READ"},
        {"unpaged": "true", "sort": "lastModifiedDate"},
    ],
)
def test_a_long_series_books_page_is_the_whole_listing_cut_where_asked(client, library, alice, query):
    """The books of a page are placed, filtered and sorted from the chapters' keys and only that page's chapters
    are read in full: the same books, numbers and total as the whole listing cut at the page."""
    from reader.komga import params, queries

    berserk, src = library["berserk"], library["berserk"].sources.first().source
    for n in range(4, 12):
        f.chapter(berserk, n, src=src, pages=1 if n % 3 else 0)
    ReadProgress.objects.create(user=alice, chapter=library["chapters"][0], last_page=3, completed=True)
    qd = QueryDict(mutable=True)
    qd.update(query)
    wanted, paging = params.book_filter(qd), params.paging(qd)
    whole = queries.series_books(alice, berserk, wanted)
    cut = whole if paging.unpaged else whole[paging.offset : paging.offset + paging.size]
    size = None if paging.unpaged else paging.size
    books, total = queries.series_books_page(alice, berserk, wanted, paging.offset, size)
    assert total == len(whole)
    assert [(b.chapter.id, b.position, b.progress) for b in books] == [
        (b.chapter.id, b.position, b.progress) for b in cut
    ]
    body = _get(client, f"/api/v1/series/{berserk.id}/books?" + qd.urlencode(), "/api/v1/series/{seriesId}/books")
    assert [b["id"] for b in body["content"]] == [str(b.chapter.id) for b in cut]
    assert body["totalElements"] == len(whole)


def test_a_series_books_page_keeps_the_reading_order_and_the_extras_numbers(client, library, alice):
    """Paged books are the whole listing's: volumes, then chapters without one, then extras with their own
    numberSort below 0 (an extra never shares a number with a main chapter on any page)."""
    from reader.komga import params, queries

    berserk, src = library["berserk"], library["berserk"].sources.first().source
    for n in range(1, 4):
        f.chapter(berserk, n, src=src, pages=1, kind="extra", title=f"Side Story {n}")
    for n in range(1, 4):
        f.chapter(berserk, n, src=src, pages=1, volume=1)
    whole = queries.series_books(alice, berserk, params.book_filter(QueryDict()))
    pages = [
        queries.series_books_page(alice, berserk, params.book_filter(QueryDict()), o, 2)[0] for o in (0, 2, 4, 6, 8)
    ]
    assert [(b.chapter.id, b.position) for page in pages for b in page] == [(b.chapter.id, b.position) for b in whole]
    paged_sorts = [queries.number_sort(b.chapter, b.extra_position) for page in pages for b in page]
    assert paged_sorts == [queries.number_sort(b.chapter, b.extra_position) for b in whole]
    assert [s < 0 for s in paged_sorts].count(True) == 3 and paged_sorts[-3:] == sorted(paged_sorts[-3:])


def test_a_series_books_page_reads_as_many_rows_whatever_the_series_length(client, library, alice):
    """A page of 5 books of a 40-chapter series reads the page's 5 chapters in full, not the 40."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    berserk, src = library["berserk"], library["berserk"].sources.first().source
    for n in range(4, 40):
        f.chapter(berserk, n, src=src, pages=1)
    with CaptureQueriesContext(connection) as queries:
        body = _get(client, f"/api/v1/series/{berserk.id}/books?size=5&page=3", "/api/v1/series/{seriesId}/books")
    assert len(body["content"]) == 5 and body["totalElements"] == 40
    # The one query that computes page counts and sizes names the page's 5 chapters by id, not the series.
    (full,) = [q["sql"] for q in queries if '"catalog_page"' in q["sql"] and '"catalog_manga"' in q["sql"]]
    assert '"catalog_chapter"."id" IN (' in full
    assert full.split('"catalog_chapter"."id" IN (', 1)[1].split(")")[0].count(",") == 4
