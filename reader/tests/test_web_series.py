"""The web app reads a series found on several sites as one: one card, one page, one reader across sources.

"The Tide" is listed by alpha (chapters 1 and 2; only 1 downloaded) and by
beta under another title (chapters 2 and 3, both downloaded), merged into
one series led by alpha's copy; "Harbour" is a series of one manga.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog import series as service
from catalog.bookmarks import create_bookmark
from catalog.models import Bookmark, Chapter
from reader.models import ReadProgress
from reader.progress import set_progress
from reader.tests import factories as f

pytestmark = [pytest.mark.django_db]
DONE = Chapter.SyncState.DONE


def _downloaded(manga, number, src, **fields):
    return f.chapter(manga, number, src=src, pages=1, **fields)


class Tide:
    def __init__(self) -> None:
        now = timezone.now()
        self.alpha, self.beta = f.source("alpha"), f.source("beta")
        self.lead = f.manga("The Tide", src=self.alpha, latest_chapter_at=now - timedelta(days=2))
        self.copy = f.manga(
            "Shiosai", src=self.beta, alt_titles=["Sea Swell"], latest_chapter_at=now - timedelta(days=1)
        )
        self.a1 = _downloaded(self.lead, 1, self.alpha)
        self.a2 = f.chapter(self.lead, 2, src=self.alpha)
        self.b2 = _downloaded(self.copy, 2, self.beta)
        self.b3 = _downloaded(self.copy, 3, self.beta)
        service.merge_series(self.lead.series, [self.copy.series], via="test")
        self.lead.refresh_from_db()
        self.copy.refresh_from_db()
        self.harbour = f.manga("Harbour", src=self.alpha, latest_chapter_at=now - timedelta(days=3))
        self.h1 = _downloaded(self.harbour, 1, self.alpha)


@pytest.fixture
def tide(db) -> Tide:
    return Tide()


@pytest.fixture
def reader(client, alice) -> Client:
    client.force_login(alice)
    assert client.get("/account/").status_code == 200  # the session user is remembered per burst: warm it
    return client


def _html(response) -> str:
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def _grid(html: str, section_id: str = "library-grid") -> list[str]:
    section = re.search(rf'<(?:section|ul)[^>]*id="{section_id}".*?</(?:section|ul)>', html, re.S)
    assert section, f"no #{section_id} on the page"
    return re.findall(r'<span class="title">([^<]*)</span>', section.group(0))


def _badges(html: str) -> dict[str, str]:
    cards = re.findall(r'<li class="card">(.*?)</li>', html, re.S)
    found = {}
    for card in cards:
        title = re.search(r'<span class="title">([^<]*)</span>', card)
        badge = re.search(r'<span class="badge" title="(\d+) unread"', card)
        if title:
            found.setdefault(title.group(1), badge.group(1) if badge else "0")
    return found


# --- the library: one card per series ---------------------------------------------------------------------


@pytest.mark.sqlite_ok
def test_the_library_shows_each_series_once_as_its_lead_with_counts_over_its_keys(tide, reader):
    html = _html(reader.get("/"))
    assert _grid(html) == ["The Tide", "Harbour"]  # alpha's copy leads; beta's newer chapter dates it
    assert "Shiosai" not in html
    assert _badges(html) == {"The Tide": "3", "Harbour": "1"}  # keys 1, 2, 3 readable from one source or other
    assert _grid(html, "shelf-updated") == ["The Tide", "Harbour"]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("public", [True, False])
def test_a_stranger_sees_the_same_one_card_per_series_when_the_library_is_public(tide, client, settings, public):
    settings.LIBRARY_PUBLIC_READ = public
    response = client.get("/")
    if not public:
        assert response.status_code == 302 and "/login/" in response["Location"]
        return
    assert _grid(_html(response)) == ["The Tide", "Harbour"]


@pytest.mark.sqlite_ok
def test_a_reader_without_staff_rights_and_a_superuser_see_the_same_library(tide, reader, staff):
    admin = Client()
    admin.force_login(staff)
    assert _grid(_html(admin.get("/"))) == _grid(_html(reader.get("/"))) == ["The Tide", "Harbour"]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("params", [{"q": "Shiosai"}, {"q": "shio", "sort": "title"}, {"source": "beta"}])
def test_a_series_is_found_by_any_copy_title_or_source_and_shown_as_its_lead(tide, reader, params):
    assert _grid(_html(reader.get("/", params))) == ["The Tide"]


def test_a_series_is_found_by_a_copy_alternative_title_after_the_leads_matching_themselves(tide, reader):
    f.manga("Sea Swell Diaries", src=tide.alpha)
    assert _grid(_html(reader.get("/", {"q": "sea swell"}))) == ["Sea Swell Diaries", "The Tide"]


@pytest.mark.sqlite_ok
def test_unread_counts_count_a_key_once_read_in_any_copy(tide, reader, alice):
    set_progress(user=alice, chapter=tide.b2, last_page=1, completed=True)  # finishes alpha's copy too
    ReadProgress.objects.create(user=alice, chapter=tide.b3, last_page=1, completed=True)
    _downloaded(tide.harbour, 2, tide.alpha)
    html = _html(reader.get("/"))
    assert _badges(html)["The Tide"] == "1"  # only chapter 1 left
    assert _grid(_html(reader.get("/", {"sort": "unread"}))) == ["Harbour", "The Tide"]
    assert "2 of 3 chapters read" in _html(reader.get(f"/mangas/{tide.lead.pk}/"))


@pytest.mark.sqlite_ok
def test_a_library_page_mixing_merged_and_single_series_costs_two_more_queries_not_one_per_row(
    tide, reader, alice, django_assert_max_num_queries
):
    alpha, beta = tide.alpha, tide.beta
    for n in range(6):
        single = f.manga(f"Single {n}", src=alpha, latest_chapter_at=timezone.now())
        _downloaded(single, 1, alpha)
        first, second = f.manga(f"Pair {n}", src=alpha), f.manga(f"Pair {n}", src=beta)
        _downloaded(first, 1, alpha)
        _downloaded(second, 2, beta)
        service.merge_series(first.series, [second.series], via="test")
    set_progress(user=alice, chapter=tide.b2, last_page=1, completed=True)
    reader.get("/", {"page": 1, "sort": "title"})
    with django_assert_max_num_queries(9):  # session, sources, tags, page, merged, series counts, single counts
        html = _html(reader.get("/", {"sort": "title"}))
    titles = _grid(html)
    assert len(titles) == len(set(titles)) == 14  # 6 pairs, 6 singles, The Tide, Harbour: one card each
    assert _badges(html)["Pair 0"] == "2" and _badges(html)["The Tide"] == "2"


@pytest.mark.sqlite_ok
def test_continue_reading_shows_the_series_lead_for_a_chapter_begun_in_another_copy(tide, reader, alice):
    ReadProgress.objects.create(user=alice, chapter=tide.b3, last_page=1, completed=False)
    html = _html(reader.get("/"))
    assert _grid(html, "shelf-continue") == ["The Tide"]
    assert f"/read/{tide.b3.pk}/?page=1" in html


# --- the series page ----------------------------------------------------------------------------------------


@pytest.mark.sqlite_ok
def test_a_copy_page_redirects_to_its_series_lead_keeping_the_query(tide, reader):
    response = reader.get(f"/mangas/{tide.copy.pk}/", {"page": 1})
    assert response.status_code == 302
    assert response["Location"] == f"/mangas/{tide.lead.pk}/?page=1"


@pytest.mark.sqlite_ok
def test_the_series_page_lists_each_key_once_in_reading_order_naming_each_row_source(tide, reader):
    html = _html(reader.get(f"/mangas/{tide.lead.pk}/"))
    rows = re.findall(r'<li id="chapter-([0-9a-f-]+)"', html)
    assert rows == [str(tide.a1.pk), str(tide.b2.pk), str(tide.b3.pk)]  # chapter 2 from beta, downloaded there
    assert re.findall(r'<small class="source">([^<]*)</small>', html) == ["Alpha", "Beta", "Beta"]
    sources = re.search(r'<p class="meta" id="manga-sources">(.*?)</p>', html, re.S).group(1)
    assert re.sub(r"<[^>]+>", "", sources) == "From Alpha (preferred), Beta"


@pytest.mark.sqlite_ok
def test_a_single_source_page_names_no_row_source(tide, reader):
    html = _html(reader.get(f"/mangas/{tide.harbour.pk}/"))
    assert 'class="source"' not in html and "(preferred)" not in html


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("url", "status"),
    [("/mangas/not-a-uuid/", 404), ("/read/not-a-uuid/", 404), ("/mangas/{lead}/?page=%00", 400)],
)
def test_hostile_series_addresses_are_refused(tide, reader, url, status):
    assert reader.get(url.format(lead=tide.lead.pk)).status_code == status


@pytest.mark.sqlite_ok
def test_read_up_to_here_marks_the_series_chapters_before_it_from_every_source(tide, reader, alice):
    response = reader.post(f"/read/{tide.b3.pk}/read-up-to/")
    assert response.status_code == 302 and response["Location"].startswith(f"/mangas/{tide.lead.pk}/")
    done = set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter_id", flat=True))
    assert {tide.a1.pk, tide.b2.pk, tide.b3.pk} <= done


# --- the reader ----------------------------------------------------------------------------------------------


def _reader_data(html: str) -> dict:
    import json

    return json.loads(re.search(r'<script id="reader-data" type="application/json">(.*?)</script>', html, re.S)[1])


@pytest.mark.sqlite_ok
def test_the_reader_reads_on_across_sources_in_the_series_order(tide, reader):
    first = _reader_data(_html(reader.get(f"/read/{tide.a1.pk}/")))
    assert first["previousUrl"] == "" and first["nextUrl"] == f"/read/{tide.b2.pk}/"
    assert first["mangaUrl"] == f"/mangas/{tide.lead.pk}/"
    middle = _reader_data(_html(reader.get(f"/read/{tide.b2.pk}/")))
    assert middle["previousUrl"] == f"/read/{tide.a1.pk}/" and middle["nextUrl"] == f"/read/{tide.b3.pk}/"


@pytest.mark.sqlite_ok
def test_the_reader_offers_the_other_sources_copies_linking_the_downloaded_ones(tide, reader):
    html = _html(reader.get(f"/read/{tide.b2.pk}/"))
    switcher = re.search(r'<p class="copies" id="copies">(.*?)</p>', html, re.S).group(1)
    assert "Also from" in html and "Alpha <small>(not downloaded)</small>" in switcher and "<a" not in switcher
    Chapter.objects.filter(pk=tide.a2.pk).update(sync_state=DONE)
    f.page(tide.a2, 0, f.image_bytes())
    html = _html(reader.get(f"/read/{tide.b2.pk}/"))
    assert f'<a href="/read/{tide.a2.pk}/" data-source="alpha">Alpha</a>' in html
    other = _html(reader.get(f"/read/{tide.a2.pk}/"))  # the alternate reads on in the series too
    assert f'<a href="/read/{tide.b2.pk}/" data-source="beta">Beta</a>' in other
    assert _reader_data(other)["nextUrl"] == f"/read/{tide.b3.pk}/"
    assert _reader_data(other)["previousUrl"] == f"/read/{tide.a1.pk}/"


@pytest.mark.sqlite_ok
def test_a_chapter_of_a_single_source_series_has_no_switcher(tide, reader):
    assert 'id="copies"' not in _html(reader.get(f"/read/{tide.h1.pk}/"))


# --- bookmarks by series --------------------------------------------------------------------------------------


@pytest.mark.sqlite_ok
def test_bookmarking_a_copy_bookmarks_the_series_on_its_lead_and_unbookmarking_removes_it(tide, reader, alice):
    response = reader.post(f"/mangas/{tide.copy.pk}/bookmark/")
    assert response.status_code == 302 and response["Location"] == f"/mangas/{tide.lead.pk}/"
    assert list(Bookmark.objects.filter(user=alice).values_list("manga_id", flat=True)) == [tide.lead.pk]
    assert 'aria-pressed="true"' in _html(reader.get(f"/mangas/{tide.lead.pk}/"))
    assert create_bookmark(user=alice, manga=tide.copy).manga_id == tide.lead.pk  # no second bookmark
    reader.post(f"/mangas/{tide.lead.pk}/bookmark/")
    assert not Bookmark.objects.filter(user=alice).exists()


@pytest.mark.sqlite_ok
def test_two_bookmarks_a_merge_brought_together_are_one_bookmarked_series(alice, reader):
    alpha, beta = f.source("alpha"), f.source("beta")
    first, second = f.manga("Tide", src=alpha), f.manga("Tide", src=beta)
    _downloaded(first, 1, alpha)
    _downloaded(second, 2, beta)
    Bookmark.objects.create(user=alice, manga=first)
    Bookmark.objects.create(user=alice, manga=second)
    service.merge_series(first.series, [second.series], via="test")
    html = _html(reader.get("/"))
    assert _grid(html, "shelf-bookmarks") == ["Tide"]
    assert 'aria-pressed="true"' in _html(reader.get(f"/mangas/{first.pk}/"))
    reader.post(f"/mangas/{second.pk}/bookmark/")  # off, for both copies
    assert not Bookmark.objects.filter(user=alice).exists()
    assert "shelf-bookmarks" not in _html(reader.get("/"))


@pytest.mark.sqlite_ok
def test_the_bookmark_shelf_counts_a_series_whose_new_chapters_came_from_another_source(tide, reader, alice):
    set_progress(user=alice, chapter=tide.a1, last_page=1, completed=True)
    Chapter.objects.filter(pk__in=[tide.a1.pk]).update(sync_state=DONE)
    reader.post(f"/mangas/{tide.lead.pk}/bookmark/")
    assert _grid(_html(reader.get("/")), "shelf-bookmarks") == ["The Tide"]  # 2 and 3, on beta, unread
    for chapter in (tide.b2, tide.b3):
        set_progress(user=alice, chapter=chapter, last_page=1, completed=True)
    assert "shelf-bookmarks" not in _html(reader.get("/"))


@pytest.mark.sqlite_ok
def test_a_series_page_and_a_chapter_cost_the_same_queries_at_any_chapter_count(tide, reader, alice):
    set_progress(user=alice, chapter=tide.b2, last_page=1, completed=True)
    cost = {}
    for extra in (0, 20):
        for n in range(extra):
            _downloaded(tide.copy if n % 2 else tide.lead, 10 + n, tide.beta if n % 2 else tide.alpha)
        reader.get(f"/mangas/{tide.lead.pk}/")
        with CaptureQueriesContext(connection) as page:
            _html(reader.get(f"/mangas/{tide.lead.pk}/"))
        with CaptureQueriesContext(connection) as chapter:
            _html(reader.get(f"/read/{tide.b2.pk}/"))
        cost[extra] = (len(page.captured_queries), len(chapter.captured_queries))
    assert cost[0] == cost[20], cost


@pytest.mark.sqlite_ok
def test_a_search_pages_through_the_leads_matching_themselves_then_the_series_found_through_a_copy(tide):
    from catalog.series_leads import leads
    from reader.shelves import search_page

    for title in ("Shio", "Shiori"):
        f.manga(title, src=tide.alpha)
    first, second, third = (search_page(leads(), "shio", page, 1) for page in (1, 2, 3))
    titles = [m.title for m in [*first.rows, *second.rows, *third.rows]]
    assert sorted(titles[:2]) == ["Shio", "Shiori"] and titles[2] == "The Tide"  # the closer match first on PG
    assert (first.has_next, second.has_next, third.has_next) == (True, True, False)
    assert search_page(leads(), "shio", 4, 1).rows == []
