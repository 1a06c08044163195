"""A batch of stored pages' rows in one INSERT through the cursor, without the ORM's bulk path.

`Page.objects.bulk_create` cost about 1 ms of CPU for ten rows (measured
alone): every value of every row through its field's `pre_save` and
`get_db_prep_save`, the rows packed into arrays for an `UNNEST` insert, and a
transaction of its own around the single statement (BEGIN and COMMIT, two
more round trips, each a hand-over of the interpreter lock). Here the values
go to the driver as they are: only the UUIDs pass through their field (a
string on SQLite), and the creation time is taken once. In autocommit (a job
thread) the one statement is its own transaction; inside a caller's
transaction it runs in a savepoint, so a duplicate row leaves that
transaction usable. Same columns, same constraint: a duplicate `(chapter,
index)` raises IntegrityError and no row of the batch is written. No signal
is sent, as `bulk_create` sent none.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from catalog.models import Page

_COLUMNS = ("id", "chapter_id", "index", "image", "content_type", "width", "height", "bytes", "sha256", "created_at")


def insert_page_rows(pages: list[Page]) -> None:
    """INSERT the rows of `pages` (their ids and fields as built) in one statement; sets their `created_at`."""
    if not pages:
        return
    now = timezone.now()
    created_at = Page._meta.get_field("created_at").get_db_prep_save(now, connection)
    id_field, chapter_field = Page._meta.get_field("id"), Page._meta.get_field("chapter")
    params: list[Any] = []
    for page in pages:
        page.created_at = now
        params += (
            id_field.get_db_prep_save(page.id, connection),
            chapter_field.get_db_prep_save(page.chapter_id, connection),
            page.index,
            page.image.name,
            page.content_type,
            page.width,
            page.height,
            page.bytes,
            page.sha256,
            created_at,
        )
    with _savepoint_in_a_transaction(), connection.cursor() as cursor:
        cursor.execute(_insert_sql(len(pages)), params)


@functools.cache  # one text per batch size (ten, and a chapter's last): built once a process, not a batch
def _insert_sql(rows: int) -> str:
    quote = connection.ops.quote_name
    row = "(" + ", ".join(["%s"] * len(_COLUMNS)) + ")"
    columns = ", ".join(quote(column) for column in _COLUMNS)
    return f"INSERT INTO {quote(Page._meta.db_table)} ({columns}) VALUES {', '.join([row] * rows)}"


def _savepoint_in_a_transaction() -> AbstractContextManager[object]:
    return transaction.atomic() if connection.in_atomic_block else nullcontext()
