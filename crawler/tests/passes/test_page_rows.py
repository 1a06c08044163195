"""A batch of page rows: one INSERT through the cursor, every field as built, each row once."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction

from catalog.models import Chapter, Manga, Page, Source
from crawler.passes.chapter_download import page_directory, write_pages

pytestmark = pytest.mark.sqlite_ok

FIELDS = ("id", "chapter_id", "index", "image", "content_type", "width", "height", "bytes", "sha256", "created_at")


@pytest.fixture
def chapter():
    source = Source.objects.create(id="rows", name="Rows", base_url="http://127.0.0.1:1/")
    manga = Manga.objects.create(title="Rows")
    return Chapter.objects.create(manga=manga, source=source, source_chapter_key="c1", number=Decimal("1"))


def stored_pages(chapter, indexes):
    """Pages as `_store_page` builds them, each with a file in the chapter's directory."""
    pages = []
    for index in indexes:
        name = default_storage.save(f"{page_directory(chapter.id)}/{uuid.uuid4().hex}.jpg", ContentFile(b"jpeg"))
        pages.append(
            Page(
                chapter=chapter,
                index=index,
                image=name,
                content_type="image/jpeg",
                width=800 + index,
                height=1200 + index,
                bytes=290_000 + index,
                sha256=f"{index:064x}",
            )
        )
    return pages


def rows(chapter):
    return [
        tuple(getattr(page, field) for field in FIELDS)
        for page in Page.objects.filter(chapter=chapter).order_by("index")
    ]


@pytest.mark.django_db
def test_a_batch_is_written_once_with_every_field_as_built(chapter):
    pages = stored_pages(chapter, range(10))
    assert write_pages(pages) == pages
    assert all(page.created_at is not None for page in pages)
    assert rows(chapter) == [
        (p.id, chapter.id, p.index, p.image.name, "image/jpeg", p.width, p.height, p.bytes, p.sha256, p.created_at)
        for p in pages
    ]


@pytest.mark.django_db(transaction=True)
def test_the_batch_is_one_statement_in_autocommit_with_no_transaction_of_its_own(chapter):
    """BEGIN and COMMIT around one statement were two more round trips for nothing: it is atomic alone."""
    seen = []

    def record(execute, sql, params, many, context):
        seen.append((sql.split(" (")[0], connection.get_autocommit(), connection.in_atomic_block))
        return execute(sql, params, many, context)

    pages = stored_pages(chapter, range(10))
    with connection.execute_wrapper(record):
        write_pages(pages)
    assert seen == [(f"INSERT INTO {connection.ops.quote_name('catalog_page')}", True, False)]
    assert len(rows(chapter)) == 10


@pytest.mark.django_db
def test_inside_a_transaction_a_duplicate_costs_only_its_own_row(chapter):
    """Another run wrote index 1 first: the rest of the batch is written, the duplicate's file deleted,
    and the caller's transaction stays usable (the batch ran in a savepoint)."""
    (first,) = stored_pages(chapter, [1])
    write_pages([first])
    batch = stored_pages(chapter, [0, 1, 2])
    with transaction.atomic():
        written = write_pages(batch)
        assert Page.objects.filter(chapter=chapter).count() == 3
    assert [page.index for page in written] == [0, 2]
    assert not default_storage.exists(batch[1].image.name)
    assert [row[0] for row in rows(chapter)] == [batch[0].id, first.id, batch[2].id]


def test_the_insert_names_every_column_of_the_page_model():
    # A field added to Page later must be added to the INSERT too, or its rows would miss it.
    from crawler.passes import page_rows

    assert set(page_rows._COLUMNS) == {field.column for field in Page._meta.concrete_fields}
