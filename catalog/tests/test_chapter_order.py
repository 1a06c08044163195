"""catalog.chapter_order: the database's reading order, its Python sort key and its "before" filter agree."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.db import connection

from catalog import chapter_numbers
from catalog.chapter_order import READING_ORDER, before, reading_key
from catalog.models import Chapter, Manga, Source

pytestmark = pytest.mark.django_db

# (kind, volume, number) in the order a reader must show them, created shuffled below.
EXPECTED = [
    ("chapter", 1, "1"),
    ("chapter", 1, "2"),
    ("chapter", 2, "1"),  # a volume that restarts its numbering follows the volume before it
    ("chapter", 2, "1.5"),
    ("chapter", None, "3"),  # not yet collected in a volume: after the volumes
    ("chapter", None, "3"),  # the same number twice: arrival breaks the tie
    ("chapter", None, "10"),
    ("extra", 1, "1"),
    ("extra", None, "0.01"),
    ("extra", None, "1"),  # shares its number with chapter 1: still after every main chapter
    ("extra", None, "2.01"),
]


def test_the_kinds_sort_main_chapters_first_by_their_stored_values():
    assert chapter_numbers.CHAPTER < chapter_numbers.EXTRA  # READING_ORDER sorts the kind by its value


def test_database_order_python_key_and_before_filter_agree():
    source = Source.objects.create(id="s", name="S", base_url="https://example.com")
    manga = Manga.objects.create(title="Harbour")
    for index in (6, 9, 0, 4, 10, 2, 5, 7, 1, 8, 3):
        kind, volume, number = EXPECTED[index]
        Chapter.objects.create(
            manga=manga, source=source, source_chapter_key=str(index), kind=kind, volume=volume, number=Decimal(number)
        )
    # The two chapter 3s arrived as 4 then 5: their keys give the order arrival gives.
    rows = list(Chapter.objects.filter(manga=manga).order_by(*READING_ORDER))
    assert [(c.kind, c.volume, c.number) for c in rows] == [(k, v, Decimal(n)) for k, v, n in EXPECTED]
    assert [c.source_chapter_key for c in rows[4:6]] == ["4", "5"]
    assert sorted(rows, key=reading_key) == rows
    for index, chapter in enumerate(rows):
        assert Chapter.objects.filter(manga=manga).filter(before(chapter)).count() == index, chapter


def test_the_admin_shows_chapters_as_readers_do_and_filters_by_kind(client, staff):
    source = Source.objects.create(id="s", name="S", base_url="https://example.com")
    manga = Manga.objects.create(title="Harbour")
    Chapter.objects.create(manga=manga, source=source, source_chapter_key="c1", number=Decimal(1), title="Start")
    Chapter.objects.create(
        manga=manga, source=source, source_chapter_key="ss1", number=Decimal(1), kind="extra", title="Side Story 1"
    )
    client.force_login(staff)
    page = client.get("/admin/catalog/chapter/").content.decode()
    assert "Chapter 1: Start" in page and "Side Story 1" in page and "Chapter 1: Side Story 1" not in page
    extras = client.get("/admin/catalog/chapter/?kind__exact=extra").content.decode()
    assert "Side Story 1" in extras and "Chapter 1: Start" not in extras


def test_rows_inserted_by_sql_that_names_no_kind_are_main_chapters():
    """bench/bigsite/seed.py seeds chapters with INSERT ... SELECT and no kind column: the database fills it."""
    source = Source.objects.create(id="s", name="S", base_url="https://example.com")
    manga = Manga.objects.create(title="Harbour")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO catalog_chapter (id, manga_id, source_id, source_chapter_key, number, title, url, "
            "sync_state, page_count, created_at, updated_at) "
            "VALUES (%s, %s, %s, 'k', 1, '', '', 'new', 0, now(), now())",
            [uuid.uuid4(), manga.id, source.id],
        )
    assert Chapter.objects.values_list("kind", "volume").get() == ("chapter", None)
