"""A series across sources through the Komga API: one entry per series, its books the union of its copies.

The Tide is crawled from two sources: alpha (its lead, chapters 1-3
downloaded) and beta (chapter 2 downloaded, 3 listed only, 4 downloaded).
Solo is a series of one manga. Every JSON answer is validated against
Komga's OpenAPI description.
"""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.test import Client

from accounts import api_keys
from catalog import series as service
from catalog.models import Manga
from reader.komga.series import union_counts
from reader.models import ReadProgress
from reader.progress import set_progress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from reader.tests.komga_schema import assert_komga_valid

ALICE = basic("alice", PASSWORD)
BOB = basic("bob", "bob-password")
SERIES = "/api/v1/series/{seriesId}"
BOOKS = "/api/v1/series/{seriesId}/books"
TRACKER = "/api/v2/series/{seriesId}/read-progress/tachiyomi"


@pytest.fixture
def world(db, alice, django_user_model):
    alpha, beta = f.source("alpha"), f.source("beta")
    tide = f.manga("The Tide", src=alpha, tags=("drama",), authors=["Mori Kei"])
    copy = f.manga("Tide of Ages", src=beta, alt_titles=["Le Reflux"], authors=["Kei Mori"])
    a = {n: f.chapter(tide, n, src=alpha, pages=2) for n in (1, 2, 3)}
    b = {
        2: f.chapter(copy, 2, src=beta, pages=2),
        3: f.chapter(copy, 3, src=beta),
        4: f.chapter(copy, 4, src=beta, pages=2),
    }
    service.merge_series(tide.series, [copy.series], via="test")
    solo = f.manga("Solo", src=alpha)
    f.chapter(solo, 1, src=alpha, pages=1)
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    return SimpleNamespace(
        tide=Manga.objects.get(pk=tide.pk), copy=Manga.objects.get(pk=copy.pk), solo=solo, a=a, b=b, bob=bob
    )


def _get(url: str, path: str, credentials: dict = ALICE) -> dict:
    response = Client().get(url, **credentials)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert_komga_valid(path, "get", body)
    return body


def _listed(query: str = "", credentials: dict = ALICE) -> dict[str, dict]:
    page = _get(f"/api/v1/series?sort=metadata.titleSort,asc&{query}", "/api/v1/series", credentials)
    return {s["name"]: s for s in page["content"]}


def _counts(series: dict) -> tuple[int, int, int, int]:
    keys = ("booksCount", "booksReadCount", "booksUnreadCount", "booksInProgressCount")
    return tuple(series[k] for k in keys)  # type: ignore[return-value]


def test_the_series_list_has_one_entry_per_series_counting_the_union_of_its_copies(world, alice):
    listed = _listed()
    assert list(listed) == ["Solo", "The Tide"]  # the copy merged into The Tide is no entry of its own
    assert listed["The Tide"]["id"] == str(world.tide.id) and listed["The Tide"]["libraryId"] == "alpha"
    assert _counts(listed["The Tide"]) == (4, 0, 4, 0)  # chapters 1-3 from alpha, 4 from beta
    assert _counts(listed["Solo"]) == (1, 0, 1, 0)

    set_progress(user=alice, chapter=world.b[2], last_page=2, completed=True)  # read in beta: alpha's is read too
    set_progress(user=alice, chapter=world.b[4], last_page=1, completed=False)
    assert _counts(_listed()["The Tide"]) == (4, 1, 2, 1)
    assert _counts(_listed(credentials=BOB)["The Tide"]) == (4, 0, 4, 0)  # another reader's progress is theirs


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("library_id=beta", ["The Tide"]),  # a series is in every library one of its copies comes from
        ("library_id=alpha", ["Solo", "The Tide"]),
        ("search=ages", ["The Tide"]),  # found by the copy's title, listed under the lead's
        ("search=reflux", ["The Tide"]),  # and by the copy's alternative titles
        ("search=tide", ["The Tide"]),
        ("genre=drama", ["The Tide"]),
    ],
)
def test_series_filters_see_every_copy(world, query, names):
    assert list(_listed(query)) == names


def test_a_search_without_an_order_ranks_the_leads_own_title_first(world):
    f.manga("Ages", src=world.solo.sources.first().source)
    page = _get("/api/v1/series?search=ages", "/api/v1/series")
    assert [s["name"] for s in page["content"]] == ["Ages", "The Tide"]


def test_read_status_filters_are_right_for_a_merged_series(world, alice):
    def statuses() -> dict[str, list[str]]:
        return {s: list(_listed(f"read_status={s}")) for s in ("UNREAD", "IN_PROGRESS", "READ")}

    assert statuses() == {"UNREAD": ["Solo", "The Tide"], "IN_PROGRESS": [], "READ": []}
    set_progress(user=alice, chapter=world.b[4], last_page=1, completed=False)  # begun in the copy only
    assert statuses() == {"UNREAD": ["Solo"], "IN_PROGRESS": ["The Tide"], "READ": []}
    for chapter in (world.b[2], world.b[4], world.a[1]):
        set_progress(user=alice, chapter=chapter, last_page=2, completed=True)
    assert statuses()["IN_PROGRESS"] == ["The Tide"]  # chapter 3 is unread
    set_progress(user=alice, chapter=world.a[3], last_page=2, completed=True)
    assert statuses() == {"UNREAD": ["Solo"], "IN_PROGRESS": [], "READ": ["The Tide"]}
    assert _counts(_listed()["The Tide"]) == (4, 4, 0, 0)


def test_a_copys_id_answers_as_its_series_under_the_leads_id(world):
    by_copy = _get(f"/api/v1/series/{world.copy.id}", SERIES)
    by_lead = _get(f"/api/v1/series/{world.tide.id}", SERIES)
    assert by_copy == by_lead
    assert by_copy["id"] == str(world.tide.id) and by_copy["name"] == "The Tide" and _counts(by_copy) == (4, 0, 4, 0)
    for series in (world.tide, world.copy):
        thumb = Client().get(f"/api/v1/series/{series.id}/thumbnail", **ALICE)
        assert thumb.status_code == 200 and thumb["Content-Type"].startswith("image/")


def test_a_series_books_are_the_union_each_key_once_numbered_in_reading_order(world, alice):
    a, b = world.a, world.b
    for series in (world.tide, world.copy):
        books = _get(f"/api/v1/series/{series.id}/books?unpaged=true", BOOKS)["content"]
        assert [bk["id"] for bk in books] == [str(c.id) for c in (a[1], a[2], a[3], b[4])]
        assert [bk["number"] for bk in books] == [1, 2, 3, 4]
        assert [bk["metadata"]["numberSort"] for bk in books] == [1.0, 2.0, 3.0, 4.0]
        assert {bk["seriesId"] for bk in books} == {str(world.tide.id)}
        assert {bk["seriesTitle"] for bk in books} == {"The Tide"}
        assert [bk["libraryId"] for bk in books] == ["alpha", "alpha", "alpha", "beta"]
    paged = _get(f"/api/v1/series/{world.copy.id}/books?size=2&page=1", BOOKS)
    assert [bk["number"] for bk in paged["content"]] == [3, 4] and paged["totalElements"] == 4
    desc = _get(f"/api/v1/series/{world.tide.id}/books?sort=metadata.numberSort,desc&size=3", BOOKS)
    assert [bk["number"] for bk in desc["content"]] == [4, 3, 2]

    set_progress(user=alice, chapter=b[2], last_page=2, completed=True)  # read in the copy not shown
    read = _get(f"/api/v1/series/{world.tide.id}/books?read_status=READ", BOOKS)["content"]
    assert [bk["id"] for bk in read] == [str(a[2].id)] and read[0]["readProgress"]["completed"] is True


def test_a_book_of_a_copy_not_shown_still_answers_as_a_book_of_the_series(world, alice):
    set_progress(user=alice, chapter=world.a[2], last_page=2, completed=True)
    alternate = _get(f"/api/v1/books/{world.b[2].id}", "/api/v1/books/{bookId}")
    assert (alternate["seriesId"], alternate["number"], alternate["metadata"]["numberSort"]) == (
        str(world.tide.id),
        2,
        2.0,
    )
    assert alternate["readProgress"]["completed"] is True  # the copies share completion
    listed_only = _get(f"/api/v1/books/{world.b[3].id}", "/api/v1/books/{bookId}")
    assert (listed_only["number"], listed_only["media"]["status"]) == (3, "UNKNOWN")
    shown = _get(f"/api/v1/books/{world.b[4].id}", "/api/v1/books/{bookId}")
    assert (shown["seriesId"], shown["number"]) == (str(world.tide.id), 4)
    solo = _get(f"/api/v1/books/{world.solo.chapters.get().id}", "/api/v1/books/{bookId}")
    assert (solo["seriesId"], solo["number"]) == (str(world.solo.id), 1)


def test_mihons_tracker_counts_and_marks_over_the_whole_series(world, alice):
    tracker = f"/api/v2/series/{world.copy.id}/read-progress/tachiyomi"
    assert _get(tracker, TRACKER) == {
        "booksCount": 4,
        "booksReadCount": 0,
        "booksUnreadCount": 4,
        "booksInProgressCount": 0,
        "lastReadContinuousNumberSort": 0.0,
        "maxNumberSort": 4.0,
    }
    put = Client().put(tracker, {"lastBookNumberSortRead": 4}, content_type="application/json", **ALICE)
    assert put.status_code == 204
    done = set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter_id", flat=True))
    copies = {world.b[2].id, world.b[3].id}  # their copies too, downloaded or not
    assert done == {world.a[1].id, world.a[2].id, world.a[3].id, world.b[4].id, *copies}
    after = _get(f"/api/v2/series/{world.tide.id}/read-progress/tachiyomi", TRACKER)
    assert (after["booksReadCount"], after["lastReadContinuousNumberSort"]) == (4, 4.0)
    assert _get(f"/api/v2/series/{world.tide.id}/read-progress/tachiyomi", TRACKER, BOB)["booksReadCount"] == 0


def test_a_whole_series_is_marked_read_and_unread_for_its_reader_only(world, alice):
    bob_reads = set_progress(user=world.bob, chapter=world.a[1], last_page=2, completed=True)
    url = f"/api/v1/series/{world.copy.id}/read-progress"
    assert Client().post(url, **ALICE).status_code == 204
    assert _counts(_get(f"/api/v1/series/{world.tide.id}", SERIES)) == (4, 4, 0, 0)
    assert ReadProgress.objects.filter(user=alice, chapter=world.b[2], completed=True).exists()
    assert Client().delete(url, **ALICE).status_code == 204
    assert not ReadProgress.objects.filter(user=alice).exists()
    assert ReadProgress.objects.filter(pk=bob_reads.pk).exists()  # a stranger's progress is never touched

    assert Client().post(url).status_code == 401  # never anonymous
    key = api_keys.mint(alice, "Mihon")[1]  # a read-scoped key: what a reader's phone holds
    assert Client().post(url, HTTP_X_API_KEY=key).status_code == 204
    assert ReadProgress.objects.filter(user=alice, completed=True).count() == 6  # 4 books and 2 other copies


def test_who_reads_the_merged_series(world, inactive, settings):
    urls = [
        "/api/v1/series",
        f"/api/v1/series/{world.copy.id}",
        f"/api/v1/series/{world.copy.id}/books",
        f"/api/v1/books/{world.b[2].id}",
    ]
    key = api_keys.mint(world.bob, "phone")[1]
    for url in urls:
        assert Client().get(url).status_code == 401, url
        assert Client().get(url, **basic("ian", "ian-password")).status_code == 401, url
        assert Client().get(url, HTTP_X_API_KEY=key).status_code == 200, url
    settings.LIBRARY_PUBLIC_READ = True
    assert _counts(_listed(credentials={})["The Tide"]) == (4, 0, 4, 0)
    assert Client().get(f"/api/v2/series/{world.copy.id}/read-progress/tachiyomi").status_code == 401


HOSTILE_ROUTES = [
    ("get", "/api/v1/series/{bad}"),
    ("get", "/api/v1/series/{bad}/books"),
    ("get", "/api/v1/series/{bad}/thumbnail"),
    ("post", "/api/v1/series/{bad}/read-progress"),
    ("delete", "/api/v1/series/{bad}/read-progress"),
    ("get", "/api/v2/series/{bad}/read-progress/tachiyomi"),
    ("get", "/api/v1/books/{bad}"),
]
HOSTILE_IDS = ["not-a-uuid", "%00", "x" * 5000, "00000000-0000-0000-0000-000000000000", "1' OR '1"]


def test_hostile_ids_are_a_4xx_and_change_nothing(world, alice):
    set_progress(user=alice, chapter=world.a[1], last_page=2, completed=True)
    for method, url in HOSTILE_ROUTES:
        for bad in HOSTILE_IDS:
            response = getattr(Client(), method)(url.format(bad=bad), **ALICE)
            # A NUL byte is refused before any view (400); any other id names no series or book.
            assert response.status_code == (400 if bad == "%00" else 404), (method, url, bad[:20])
    assert ReadProgress.objects.filter(user=alice).count() == 1


def test_a_series_page_mixing_merged_and_single_series_costs_the_same_queries(
    world, alice, django_assert_max_num_queries
):
    session = Client()
    session.force_login(alice)
    url = "/api/v1/series?size=50"
    session.get(url)  # warm the session and content-type caches
    # session, count, the page's ids, its series, tags, which are merged, their chapters, sources
    with django_assert_max_num_queries(8):
        assert len(session.get(url).json()["content"]) == 2
    src_a, src_b = world.tide.sources.first().source, world.copy.sources.first().source
    for n in range(6):
        lead, copy = f.manga(f"Lead {n}", src=src_a), f.manga(f"Copy {n}", src=src_b)
        for number in (1, 2):
            f.chapter(lead, number, src=src_a, pages=1)
            f.chapter(copy, number + 1, src=src_b, pages=1)
        service.merge_series(lead.series, [copy.series], via="test")
        f.chapter(f.manga(f"Single {n}", src=src_a), 1, src=src_a, pages=1)
    with django_assert_max_num_queries(8):
        page = session.get(url).json()
    assert len(page["content"]) == 14
    assert {s["name"]: s["booksCount"] for s in page["content"]}["Lead 0"] == 3


def test_a_merged_series_books_cost_the_same_queries_whatever_its_length(world, alice, django_assert_max_num_queries):
    session = Client()
    session.force_login(alice)
    url = f"/api/v1/series/{world.copy.id}/books?size=5"
    session.get(url)
    with django_assert_max_num_queries(9):
        assert session.get(url).json()["totalElements"] == 4
    src_b = world.copy.sources.first().source
    for n in range(5, 40):
        f.chapter(world.copy, n, src=src_b, pages=1)
    with django_assert_max_num_queries(9):
        assert session.get(url).json()["totalElements"] == 39
    with django_assert_max_num_queries(9):
        assert session.get(f"/api/v1/books/{world.b[2].id}").status_code == 200


@pytest.mark.sqlite_ok
def test_union_counts_count_each_key_once_from_its_shown_copy():
    def ch(source, number, state="done", done=None, page=0):
        return SimpleNamespace(
            source_id=source, kind="chapter", volume=None, number=Decimal(number), title="", sync_state=state,
            done=done, page=page,
        )  # fmt: skip

    chapters = [
        ch("alpha", 1, done=True),
        ch("beta", 1, done=True),  # a copy of a read chapter: one book, read
        ch("alpha", 2, state="new"),
        ch("beta", 2, done=False, page=3),  # shown (alpha's is not downloaded), begun
        ch("beta", 3, state="new"),  # not readable anywhere: no book
        ch("alpha", 4, done=False, page=0),  # opened, nothing read: unread
    ]
    counts = union_counts(chapters, ["alpha", "beta"])
    assert (counts.books, counts.read, counts.in_progress) == (3, 1, 1)
    assert union_counts([], ["alpha"]).books == 0
