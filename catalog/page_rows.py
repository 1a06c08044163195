"""The page an image request names, in one statement written once: no ORM query built per request.

A page request's own work is small; building its queryset was not (the
filter, the compiler, the ordering, the model: about half of a Komga page
request's CPU, profiled). The statements here are composed once per
database connection vendor from the model's own table and column names,
and each request only sends them. What comes back is a `Page` as
`.only(*PAGE_FIELDS)` would give it, or None, in which case the view takes
its ordinary path (which says what was missing: the book, or the page).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection

from catalog.models import Chapter, Page

# What an image answer reads of a page (reader.page_images.page_response).
PAGE_FIELDS = ("id", "image", "content_type", "width", "sha256")


def page_by_id(page_id: uuid.UUID | str) -> Page | None:
    """The page `page_id`, or None when there is none (or the id is no UUID)."""
    key = _uuid(page_id)
    if key is None:
        return None
    return _one(_statements(connection.vendor)["by_id"], [_db_uuid(key)])


def page_of_chapter(chapter_id: uuid.UUID | str, index: int) -> Page | None:
    """The page at `index` of the chapter `chapter_id` when that chapter is not dropped, else None."""
    key = _uuid(chapter_id)
    if key is None or not holdable_index(index):
        return None
    return _one(_statements(connection.vendor)["of_chapter"], [_db_uuid(key), index])


@dataclass(frozen=True)
class StreamPage:
    """A chapter's `number`-th page in reading order, with what a page stream (OPDS-PSE) declares of the chapter:
    its lowest and highest stored page type and its page count."""

    page: Page
    chapter: Chapter
    first_type: str | None
    last_type: str | None
    page_count: int


def stream_page(chapter_id: uuid.UUID | str, number: int) -> StreamPage | None:
    """The `number`-th (0-based) page by index of the chapter `chapter_id` when it is not dropped, else None."""
    key = _uuid(chapter_id)
    if key is None or not holdable_index(number):
        return None
    with connection.cursor() as cursor:
        cursor.execute(_statements(connection.vendor)["stream"], [_db_uuid(key), number])
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(_fields())
    page = Page.from_db(connection.alias, [field.attname for field in _fields()], _converted(list(row[:width])))
    first_type, last_type, count = row[width:]
    chapter = Chapter.from_db(connection.alias, ["id"], [key])
    return StreamPage(page, chapter, first_type, last_type, int(count))


def holdable_index(index: int) -> bool:
    """Whether a page index column could hold `index`: any other finds no page, and is not sent to the database
    (SQLite refuses a parameter past 64 bits, where the ORM's lookups answer an out-of-range value with nothing)."""
    low, high = connection.ops.integer_field_range("PositiveIntegerField")
    return (low is None or index >= low) and (high is None or index <= high) and 0 <= index < 2**63


def _uuid(value: uuid.UUID | str) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return None


def _db_uuid(value: uuid.UUID) -> Any:
    return Page._meta.pk.get_db_prep_value(value, connection)  # type: ignore[union-attr]  # Page has a pk


def _one(sql: str, params: list[Any]) -> Page | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return Page.from_db(connection.alias, [field.attname for field in _fields()], _converted(list(row)))


def _converted(values: list[Any]) -> list[Any]:
    """The id as the model holds it: SQLite returns a UUID column as hex text."""
    at = [field.attname for field in _fields()].index("id")
    if not isinstance(values[at], uuid.UUID):
        values[at] = uuid.UUID(str(values[at]))
    return values


@cache
def _fields() -> tuple[Any, ...]:
    """PAGE_FIELDS in the model's own order, the order `Model.from_db` reads values in."""
    return tuple(field for field in Page._meta.concrete_fields if field.attname in PAGE_FIELDS)


@cache
def _statements(vendor: str) -> dict[str, str]:
    """The statements, composed once for this database's quoting. Pure but for the models' metadata."""
    q = connection.ops.quote_name
    page, chapter = q(Page._meta.db_table), q(Chapter._meta.db_table)
    columns = ", ".join(f"p.{q(field.column)}" for field in _fields())
    page_chapter = q(Page._meta.get_field("chapter").column)
    page_index = q(Page._meta.get_field("index").column)
    chapter_id = q(Chapter._meta.pk.column)  # type: ignore[union-attr]  # Chapter has a pk
    dropped = q(Chapter._meta.get_field("dropped_at").column)
    page_id = q(Page._meta.pk.column)  # type: ignore[union-attr]  # Page has a pk
    of_this = f"FROM {page} t WHERE t.{page_chapter} = p.{page_chapter}"
    content_type = q(Page._meta.get_field("content_type").column)
    return {
        "by_id": f"SELECT {columns} FROM {page} p WHERE p.{page_id} = %s",
        "stream": (
            f"SELECT {columns}, (SELECT MIN(t.{content_type}) {of_this}), (SELECT MAX(t.{content_type}) {of_this}),"
            f" (SELECT COUNT(*) {of_this}) FROM {page} p JOIN {chapter} c ON c.{chapter_id} = p.{page_chapter}"
            f" WHERE p.{page_chapter} = %s AND c.{dropped} IS NULL ORDER BY p.{page_index} LIMIT 1 OFFSET %s"
        ),
        "of_chapter": (
            f"SELECT {columns} FROM {page} p JOIN {chapter} c ON c.{chapter_id} = p.{page_chapter}"
            f" WHERE p.{page_chapter} = %s AND p.{page_index} = %s AND c.{dropped} IS NULL"
        ),
    }
