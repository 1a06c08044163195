"""The web app's library and manga pages: counts, shelves, sort and filters, read marks, theme, who may see them."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import Bookmark, Chapter, Manga
from reader.http import BadParameter
from reader.library_query import LibraryQuery, parse_library_query
from reader.models import ReaderPreference, ReadProgress
from reader.reading_modes import default_mode
from reader.tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client, alice) -> Client:
    client.force_login(alice)
    # The signed-in user is read once a burst (accounts.session_user): the query counts below compare requests
    # that all find it remembered.
    assert client.get("/account/").status_code == 200
    return client


def _html(response) -> str:
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def _card_titles(html: str, section_id: str) -> list[str]:
    section = re.search(rf'<(?:section|ul)[^>]*id="{section_id}".*?</(?:section|ul)>', html, re.S)
    assert section, f"no #{section_id} on the page"
    return re.findall(r'<span class="title">([^<]*)</span>', section.group(0))


# --- the query string, as a pure function ----------------------------------------------------


def test_an_empty_query_is_the_whole_library_by_latest_update():
    assert parse_library_query({}, sources=[]) == LibraryQuery()


def test_every_sort_filter_and_page_is_read_and_written_back():
    params = {"q": "  dragon ", "sort": "unread", "tag": "action", "status": "ongoing", "source": "demo", "page": "3"}
    query = parse_library_query(params, sources=["demo"])
    assert query == LibraryQuery("dragon", "unread", True, "action", "ongoing", "demo", 3)
    assert query.params(page=4) == {**params, "q": "dragon", "page": "4"}
    assert query.params(page=1) == {k: v for k, v in {**params, "q": "dragon"}.items() if k != "page"}


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"page": "abc"}, "page='abc'"),
        ({"page": "0"}, "page='0'"),
        ({"page": "-2"}, "page='-2'"),
        ({"page": "100001"}, "page='100001'"),
        ({"sort": "rating"}, "sort='rating'"),
        ({"status": "finished"}, "status='finished'"),
        ({"source": "nowhere"}, "source='nowhere'"),
    ],
)
def test_a_bad_value_is_refused_naming_the_parameter_and_the_value(params, named):
    with pytest.raises(BadParameter, match=re.escape(named)):
        parse_library_query(params, sources=["demo"])


def test_a_source_reading_mode_is_checked_with_the_other_settings():
    from catalog.source_settings import SourceSettingsError
    from reader.source_settings import reading_mode, validate

    validate("demo", "demo", {"reading_mode": "webtoon"})
    with pytest.raises(SourceSettingsError, match="source 'demo': settings key 'reading_mode' must be one of"):
        validate("demo", "demo", {"reading_mode": "strip"})
    assert reading_mode(None) == ""


def test_long_strips_open_in_webtoon_mode_unless_the_source_says_otherwise():
    assert default_mode("", [(800, 3000)] * 5 + [(800, 1200)]) == "webtoon"
    assert default_mode("", [(800, 1200)] * 5 + [(800, 3000)]) == "scroll"
    assert default_mode("", [(0, 0)]) == "scroll"
    assert default_mode("paged", [(800, 3000)] * 5) == "paged"


# --- the library page ------------------------------------------------------------------------


def test_bad_query_values_answer_a_400_page_in_the_library_layout(reader):
    for query in ("page=abc", "sort=rating", "status=finished", "source=nowhere"):
        response = reader.get("/?" + query)
        assert response.status_code == 400
        assert response["Content-Type"].startswith("text/html")
        html = response.content.decode()
        assert 'class="error" role="alert"' in html and query.split("=")[1] in html
        assert 'href="/"' in html and "Skip to content" in html


def test_covers_show_unread_counts_and_how_far_the_reader_got(reader, alice):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src)
    chapters = [f.chapter(manga, n, src=src, pages=2) for n in (1, 2, 3)]
    f.chapter(manga, 4, src=src)  # listed, not downloaded: not counted
    f.chapter(manga, 5, src=src, pages=1, dropped_at=timezone.now())  # dropped: not counted
    ReadProgress.objects.create(user=alice, chapter=chapters[0], last_page=2, completed=True)
    f.manga("Empty")

    html = _html(reader.get("/", {"sort": "title"}))
    berserk = html[html.index(f"/mangas/{manga.id}/") :]
    berserk = berserk[: berserk.index("</li>")]
    assert '>2<span class="visually-hidden"> unread</span>' in berserk
    assert 'aria-label="1 of 3 chapters read"' in berserk and "width: 33%" in berserk
    empty = html[html.index(">Empty<") - 600 : html.index(">Empty<")]
    assert "badge" not in empty.split("<li")[-1] and "progress" not in empty.split("<li")[-1]


def test_shelves_continue_reading_recently_updated_and_bookmarks_with_new_chapters(reader, alice, django_user_model):
    src = f.source("demo")
    now = timezone.now()
    begun = f.manga("Begun", src=src, latest_chapter_at=now - timedelta(days=3))
    finished = f.manga("Finished", src=src, latest_chapter_at=now - timedelta(days=1))
    marked = f.manga("Marked", src=src, latest_chapter_at=now)
    f.manga("Never updated", src=src)
    begun_ch = [f.chapter(begun, n, src=src, pages=5, title="The Gate" if n == 2 else "") for n in (1, 2)]
    finished_ch = f.chapter(finished, 1, src=src, pages=2)
    marked_ch = f.chapter(marked, 1, src=src, pages=2)
    ReadProgress.objects.create(user=alice, chapter=begun_ch[0], last_page=5, completed=True)
    ReadProgress.objects.create(user=alice, chapter=begun_ch[1], last_page=3)
    ReadProgress.objects.create(user=alice, chapter=finished_ch, last_page=2, completed=True)
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    ReadProgress.objects.create(user=bob, chapter=marked_ch, last_page=1)  # someone else's reading
    Bookmark.objects.create(user=alice, manga=marked)
    Bookmark.objects.create(user=alice, manga=finished)  # bookmarked, nothing new

    html = _html(reader.get("/"))
    assert _card_titles(html, "shelf-continue") == ["Begun"]
    assert f'href="/read/{begun_ch[1].id}/?page=3"' in html
    assert "Chapter 2: The Gate · page 3" in html
    assert _card_titles(html, "shelf-updated") == ["Marked", "Finished", "Begun"]
    assert _card_titles(html, "shelf-bookmarks") == ["Marked"]
    # Shelves belong to the plain first page: a filter or a sort shows the grid alone.
    assert "shelf-continue" not in _html(reader.get("/", {"sort": "title"}))
    assert "shelf-updated" not in _html(reader.get("/", {"page": "2"}))


def test_sorts_and_filters_pick_and_order_the_grid(reader, alice):
    demo, other = f.source("demo"), f.source("other")
    now = timezone.now()
    a = f.manga("Alpha", src=demo, tags=("action",), status="ongoing", latest_chapter_at=now - timedelta(days=2))
    b = f.manga("Bravo", src=other, tags=("drama",), status="completed", latest_chapter_at=now)
    c = f.manga("Charlie", src=demo, tags=("action",), status="completed")
    for n in (1, 2, 3):
        f.chapter(c, n, src=demo, pages=1)
    f.chapter(a, 1, src=demo, pages=1)
    Manga.objects.filter(pk=a.pk).update(created_at=now - timedelta(days=30))

    def grid(**params):
        return _card_titles(_html(reader.get("/", params)), "library-grid")

    assert grid(sort="title") == ["Alpha", "Bravo", "Charlie"]
    assert grid(sort="updated") == ["Bravo", "Alpha", "Charlie"]
    assert grid(sort="added") == ["Charlie", "Bravo", "Alpha"]
    assert grid(sort="unread") == ["Charlie", "Alpha", "Bravo"]
    assert grid(sort="title", tag="action") == ["Alpha", "Charlie"]
    assert grid(sort="title", status="completed") == ["Bravo", "Charlie"]
    assert grid(sort="title", source="other") == ["Bravo"]
    assert grid(sort="title", source="demo", status="completed") == ["Charlie"]
    assert b.pk  # Bravo has no chapters: last by unread
    assert grid(q="a", sort="unread") == ["Charlie", "Alpha", "Bravo"]  # a search in a chosen order
    assert grid(q="charl") == ["Charlie"]


def test_anonymous_readers_sort_by_chapters_when_the_library_is_public(client, settings, db):
    settings.LIBRARY_PUBLIC_READ = True
    src = f.source("demo")
    for title, chapters in (("One", 1), ("Three", 3), ("None", 0)):
        manga = f.manga(title, src=src)
        for n in range(chapters):
            f.chapter(manga, n + 1, src=src, pages=1)
    html = _html(client.get("/", {"sort": "unread"}))
    assert _card_titles(html, "library-grid") == ["Three", "One", "None"]


def _library_with(n: int, user) -> None:
    src = f.source(f"s{n}")
    for i in range(n):
        manga = f.manga(f"Series {n}-{i}", src=src, tags=("a", "b"), latest_chapter_at=timezone.now())
        chapters = [
            Chapter.objects.create(
                manga=manga, source=src, source_chapter_key=f"{manga.id}-{k}", number=k, sync_state="done"
            )
            for k in (1, 2)
        ]
        ReadProgress.objects.create(user=user, chapter=chapters[0], last_page=1)
        Bookmark.objects.create(user=user, manga=manga)


def test_the_library_costs_the_same_queries_for_3_mangas_as_for_30(reader, alice):
    _library_with(3, alice)
    with CaptureQueriesContext(connection) as few:
        _html(reader.get("/"))
    _library_with(30, alice)
    with CaptureQueriesContext(connection) as many:
        html = _html(reader.get("/"))
    assert len(_card_titles(html, "shelf-continue")) == 12 and html.count('class="badge"') >= 24
    assert len(many) == len(few), [q["sql"][:120] for q in many]
    with CaptureQueriesContext(connection) as sorted_page:
        _html(reader.get("/", {"sort": "unread", "tag": "a", "status": "unknown"}))
    assert len(sorted_page) <= len(few)


def test_a_manga_page_costs_the_same_queries_for_3_chapters_as_for_30(reader, alice):
    src = f.source("demo")
    few, many = f.manga("Few", src=src), f.manga("Many", src=src)
    for manga, n in ((few, 3), (many, 30)):
        for k in range(1, n + 1):
            chapter = Chapter.objects.create(
                manga=manga, source=src, source_chapter_key=f"{manga.id}-{k}", number=k, sync_state="done"
            )
            ReadProgress.objects.create(user=alice, chapter=chapter, last_page=1, completed=k % 2 == 0)
    counts = []
    for manga in (few, many):
        with CaptureQueriesContext(connection) as queries:
            _html(reader.get(f"/mangas/{manga.id}/"))
        counts.append(len(queries))
    assert counts[0] == counts[1]


# --- the manga page: source, read marks ------------------------------------------------------


def test_the_manga_page_names_its_source_and_never_links_a_script_url(reader):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src)
    f.chapter(manga, 1, src=src, pages=1)
    html = _html(reader.get(f"/mangas/{manga.id}/"))
    link = manga.sources.get()
    assert f'From <a href="{link.url}" rel="noopener noreferrer" target="_blank">Demo</a>' in html
    manga.sources.update(url="javascript:alert(1)")
    html = _html(reader.get(f"/mangas/{manga.id}/"))
    assert "javascript:" not in html and "From Demo" in html


def test_mark_read_unread_and_read_up_to_here(reader, alice):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src)
    chapters = [f.chapter(manga, n, src=src, pages=3) for n in (1, 2, 3, 4)]

    response = reader.post(f"/read/{chapters[1].id}/mark/", {"state": "read"})
    assert response.status_code == 302 and response["Location"] == f"/mangas/{manga.id}/#chapter-{chapters[1].id}"
    assert list(ReadProgress.objects.filter(user=alice).values_list("chapter", "last_page", "completed")) == [
        (chapters[1].id, 3, True)
    ]
    reader.post(f"/read/{chapters[2].id}/read-up-to/")
    done = set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter", flat=True))
    assert done == {c.id for c in chapters[:3]}
    reader.post(f"/read/{chapters[0].id}/mark/", {"state": "unread"})
    assert not ReadProgress.objects.filter(user=alice, chapter=chapters[0]).exists()

    html = _html(reader.get(f"/mangas/{manga.id}/"))
    assert "2 of 4 chapters read" in html
    assert html.count(">Mark unread<") == 2 and html.count(">Mark read<") == 2

    before = list(ReadProgress.objects.values_list("chapter", "completed"))
    bad = reader.post(f"/read/{chapters[3].id}/mark/", {"state": "finished"})
    assert bad.status_code == 400 and b"state=&#x27;finished&#x27;" in bad.content
    assert reader.get(f"/read/{chapters[3].id}/mark/").status_code == 405
    assert list(ReadProgress.objects.values_list("chapter", "completed")) == before


def test_read_marks_need_a_signed_in_user(client, db):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1)
    for url in (f"/read/{chapter.id}/mark/", f"/read/{chapter.id}/read-up-to/", "/theme/"):
        response = client.post(url, {"state": "read", "theme": "dark"})
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert not ReadProgress.objects.exists() and not ReaderPreference.objects.exists()


# --- theme ------------------------------------------------------------------------------------


def test_the_theme_is_kept_per_user_on_the_server(reader, alice, django_user_model):
    assert 'data-theme="system"' in _html(reader.get("/"))
    response = reader.post("/theme/", {"theme": "dark", "next": "/?sort=title"})
    assert response.status_code == 302 and response["Location"] == "/?sort=title"
    assert ReaderPreference.objects.get(user=alice).theme == "dark"
    html = _html(reader.get("/"))
    assert 'data-theme="dark"' in html and 'name="theme" value="light" aria-pressed="true"' in html

    other = Client()
    other.force_login(alice)  # another device: the same choice
    assert 'data-theme="dark"' in _html(other.get("/"))
    bob = Client()
    bob.force_login(django_user_model.objects.create_user("bob", "bob@example.com", "bob-password"))
    assert 'data-theme="system"' in _html(bob.get("/"))

    assert reader.post("/theme/", {"theme": "neon"}).status_code == 400
    assert ReaderPreference.objects.get(user=alice).theme == "dark"
    away = reader.post("/theme/", {"theme": "light", "next": "https://evil.example/"})
    assert away["Location"] == "/"


# --- who may see the pages --------------------------------------------------------------------


def test_anonymous_readers_go_to_the_login_page_unless_the_library_is_public(client, settings, db):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src, latest_chapter_at=timezone.now())
    chapter = f.chapter(manga, 1, src=src, pages=1)
    for url in ("/", "/?page=abc", f"/mangas/{manga.id}/", f"/read/{chapter.id}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next=")

    settings.LIBRARY_PUBLIC_READ = True
    html = _html(client.get("/"))
    assert _card_titles(html, "shelf-updated") == ["Berserk"]
    assert 'class="badge"' not in html  # no account, no reading: no "unread" to count
    assert "shelf-continue" not in html and "theme-toggle" not in html and 'data-theme="system"' in html
    manga_html = _html(client.get(f"/mangas/{manga.id}/"))
    assert "Mark read" not in manga_html and "Bookmark" not in manga_html
    assert client.get("/?page=abc").status_code == 400


# --- the reader page's data --------------------------------------------------------------------


def _reader_data(html: str) -> dict:
    return json.loads(re.search(r'<script id="reader-data" type="application/json">(.*?)</script>', html, re.S)[1])


def test_the_reader_knows_the_next_chapter_its_first_pages_and_the_opening_mode(reader):
    src = f.source("demo")
    manga = f.manga("Tower", src=src)
    first = f.chapter(manga, 12, src=src, pages=2)
    following = f.chapter(manga, 13, src=src, pages=4, width=100, height=400, title="The <b>Gate</b>")
    html = _html(reader.get(f"/read/{first.id}/"))
    data = _reader_data(html)
    assert data["nextTitle"] == "Chapter 13: The <b>Gate</b>" and data["mode"] == "scroll"
    assert [p["scaled"] for p in data["nextPages"]] == [
        f"/read/pages/{p.id}/image/" for p in following.pages.order_by("index")[:3]
    ]
    assert "Next: Chapter 13: The &lt;b&gt;Gate&lt;/b&gt;" in html and "<b>Gate</b>" not in html.split("reader-data")[0]

    last = _reader_data(_html(reader.get(f"/read/{following.id}/")))
    assert last["mode"] == "webtoon" and last["nextUrl"] == "" and last["nextPages"] == []
    assert "You're caught up" in _html(reader.get(f"/read/{following.id}/"))

    src.settings = {"reading_mode": "paged"}
    src.save()
    assert _reader_data(_html(reader.get(f"/read/{following.id}/")))["mode"] == "paged"


# --- deep pages by cursor ------------------------------------------------------------------------


def _pager_link(html: str, rel: str) -> str:
    found = re.search(rf'<a rel="{rel}" href="([^"]*)"', html)
    return found.group(1).replace("&amp;", "&") if found else ""


def _walk(reader, start: str, rel: str) -> list[list[str]]:
    pages, href = [], start
    while href:
        html = _html(reader.get("/" + href))
        pages.append(_card_titles(html, "library-grid"))
        href = _pager_link(html, rel)
    return pages


@pytest.mark.parametrize("sort", ["", "sort=title&", "sort=added&"])
def test_library_pager_links_seek_forwards_and_back_with_every_manga_once_in_the_numbered_order(reader, sort):
    now = timezone.now()
    for n in range(30):
        f.manga(f"Dated {n:02d}", latest_chapter_at=now - timedelta(hours=n % 7))
    for _ in range(25):
        f.manga("Same title")  # ties in title, arrival close together, no chapter yet
    forwards = _walk(reader, f"?{sort}", "next")
    first_next = _pager_link(_html(reader.get(f"/?{sort}")), "next")
    assert "after=" in first_next and "page=2" in first_next
    by_number = [_card_titles(_html(reader.get(f"/?{sort}page={n}")), "library-grid") for n in (1, 2, 3)]
    assert forwards == by_number
    assert sum(len(p) for p in forwards) == 55
    last = _html(reader.get("/" + _pager_link(_html(reader.get("/" + first_next)), "next")))
    previous = _pager_link(last, "prev")
    assert "before=" in previous
    assert _walk(reader, previous, "prev") == forwards[:2][::-1]


def test_a_library_cursor_we_did_not_write_is_a_400_page(reader):
    for query in ("after=not-base64!", "before=WzEsMl0", "sort=added&after=WzEsMl0", "after=a&before=b"):
        response = reader.get("/?" + query)
        assert response.status_code == 400, query
        assert "cursor" in response.content.decode()
