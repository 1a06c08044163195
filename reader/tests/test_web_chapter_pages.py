"""A manga page lists its chapters a bounded page at a time, whatever the chapter count, with read marks per page."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import Chapter, Manga, Page
from reader.chapter_list import CHAPTERS_PER_PAGE, page_of
from reader.tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client, alice) -> Client:
    client.force_login(alice)
    return client


def _many_chapters(count: int, source_id: str = "big") -> tuple[Manga, list[Chapter]]:
    """`count` downloaded chapters of one stored page each, inserted in bulk (no image files: rows only)."""
    src = f.source(source_id)
    manga = f.manga("Long Runner", src=src)
    chapters = Chapter.objects.bulk_create(
        Chapter(
            manga=manga,
            source=src,
            source_chapter_key=f"{source_id}-{n}",
            number=Decimal(n),
            page_count=1,
            sync_state=Chapter.SyncState.DONE,
        )
        for n in range(1, count + 1)
    )
    Page.objects.bulk_create(
        Page(chapter=c, index=0, content_type="image/png", bytes=1, width=1, height=1, image=f"{c.id}.png")
        for c in chapters
    )
    return manga, chapters


def _get(client: Client, url: str) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode(), len(queries)


def test_a_2000_chapter_manga_renders_one_bounded_page_in_as_many_queries_as_a_small_one(reader):
    small, _ = _many_chapters(50, "small")
    reader.get("/")  # the signed-in user is read once a burst: every count below sees it remembered
    _, small_queries = _get(reader, f"/mangas/{small.id}/")
    big, chapters = _many_chapters(2000)

    first, first_queries = _get(reader, f"/mangas/{big.id}/")
    second, second_queries = _get(reader, f"/mangas/{big.id}/?page=2")
    assert first.count('<li id="chapter-') == CHAPTERS_PER_PAGE == second.count('<li id="chapter-')
    assert f'id="chapter-{chapters[0].id}"' in first and f'id="chapter-{chapters[100].id}"' in second
    assert first_queries == second_queries == small_queries
    assert 'rel="next" href="?page=2"' in first and 'rel="prev"' not in first
    assert 'rel="prev" href="?page=1"' in second and 'rel="next" href="?page=3"' in second
    last, _ = _get(reader, f"/mangas/{big.id}/?page=20")
    assert last.count('<li id="chapter-') == 100 and 'rel="next"' not in last
    assert "0 of 2000 chapters read" in first

    assert reader.get(f"/mangas/{big.id}/?page=21").status_code == 404
    bad = reader.get(f"/mangas/{big.id}/?page=zero")
    assert bad.status_code == 400 and b"page must be a positive integer" in bad.content


def test_read_marks_on_page_two_come_back_to_page_two_and_count_over_every_page(reader):
    manga, chapters = _many_chapters(2000)
    target = chapters[149]  # chapter 150: row 50 of page 2
    assert page_of(target) == 2 and page_of(chapters[99]) == 1 and page_of(chapters[100]) == 2

    response = reader.post(f"/read/{target.id}/mark/", {"state": "read"})
    assert response["Location"] == f"/mangas/{manga.id}/?page=2#chapter-{target.id}"
    second, _ = _get(reader, f"/mangas/{manga.id}/?page=2")
    assert "1 of 2000 chapters read" in second and second.count(">Mark unread<") == 1
    assert f'<li id="chapter-{target.id}" class="read">' in second

    response = reader.post(f"/read/{target.id}/read-up-to/")
    assert response["Location"] == f"/mangas/{manga.id}/?page=2#chapter-{target.id}"
    first, _ = _get(reader, f"/mangas/{manga.id}/")
    second, _ = _get(reader, f"/mangas/{manga.id}/?page=2")
    assert "150 of 2000 chapters read" in first
    assert first.count(">Mark unread<") == 100 and second.count(">Mark unread<") == 50

    reader.post(f"/read/{chapters[120].id}/mark/", {"state": "unread"})
    second, _ = _get(reader, f"/mangas/{manga.id}/?page=2")
    assert "149 of 2000 chapters read" in second and second.count(">Mark unread<") == 49
