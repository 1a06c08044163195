"""The image routes' one-statement page lookups give the page the ORM gives, or None where the ORM finds none."""

from __future__ import annotations

import uuid

import pytest
from django.utils import timezone

from catalog.models import Page
from catalog.page_rows import PAGE_FIELDS, holdable_index, page_by_id, page_of_chapter, stream_page
from reader.opds_views import with_stream_type
from reader.tests import factories as f

pytestmark = [pytest.mark.sqlite_ok, pytest.mark.django_db]


@pytest.fixture
def chapter(media_storage):
    src = f.source()
    return f.chapter(f.manga(src=src), 1, src=src, pages=3)


def _same(found: Page | None, expected: Page) -> None:
    assert found is not None
    assert type(found.pk) is type(expected.pk)
    for name in PAGE_FIELDS:
        assert getattr(found, name) == getattr(expected, name), name
    assert found.image.name == expected.image.name
    assert found.get_deferred_fields() == expected.get_deferred_fields()


def test_a_page_by_its_id_is_the_page_the_orm_reads(chapter):
    expected = Page.objects.only(*PAGE_FIELDS).get(chapter=chapter, index=1)
    _same(page_by_id(expected.pk), expected)
    _same(page_by_id(str(expected.pk)), expected)


def test_a_page_of_a_chapter_is_found_by_its_index(chapter):
    for index in range(3):
        _same(
            page_of_chapter(str(chapter.pk), index), Page.objects.only(*PAGE_FIELDS).get(chapter=chapter, index=index)
        )


@pytest.mark.parametrize("bad", ["not-a-uuid", "", str(uuid.uuid4())])
def test_an_unknown_or_malformed_id_finds_nothing(chapter, bad):
    assert page_by_id(bad) is None
    assert page_of_chapter(bad, 0) is None


def test_a_missing_index_finds_nothing(chapter):
    assert page_of_chapter(chapter.pk, 3) is None
    assert page_of_chapter(chapter.pk, -1) is None


def test_a_dropped_chapter_shows_no_page(chapter):
    chapter.dropped_at = timezone.now()
    chapter.save(update_fields=["dropped_at"])
    assert page_of_chapter(chapter.pk, 0) is None
    assert page_by_id(Page.objects.get(chapter=chapter, index=0).pk) is not None  # as the web reader's route reads


def test_a_lookup_is_one_statement(chapter, django_assert_num_queries):
    page = Page.objects.get(chapter=chapter, index=0)
    with django_assert_num_queries(1):
        page_of_chapter(chapter.pk, 0)
    with django_assert_num_queries(1):
        page_by_id(page.pk)


def test_a_stream_page_is_the_nth_page_by_index_with_the_chapters_types_and_count(chapter):
    Page.objects.filter(chapter=chapter, index=2).update(index=7, content_type="image/webp")  # a gap, two types
    annotated = with_stream_type(type(chapter).objects.only("id")).get(pk=chapter.pk)
    ordered = list(Page.objects.only(*PAGE_FIELDS).filter(chapter=chapter).order_by("index"))
    for number, expected in enumerate(ordered):
        found = stream_page(str(chapter.pk), number)
        assert found is not None
        _same(found.page, expected)
        assert found.chapter.pk == chapter.pk
        assert (found.first_type, found.last_type) == (annotated.first_type, annotated.last_type)
        assert found.page_count == 3
    assert stream_page(chapter.pk, 3) is None
    assert stream_page(chapter.pk, -1) is None
    assert stream_page("not-a-uuid", 0) is None


def test_a_dropped_chapter_streams_nothing(chapter):
    chapter.dropped_at = timezone.now()
    chapter.save(update_fields=["dropped_at"])
    assert stream_page(chapter.pk, 0) is None


def test_a_stream_page_is_one_statement(chapter, django_assert_num_queries):
    with django_assert_num_queries(1):
        stream_page(chapter.pk, 1)


@pytest.mark.parametrize("index", [-1, 2**31, 2**63, 10**20])
def test_an_index_no_page_column_holds_finds_nothing_and_reaches_no_database(chapter, index, django_assert_num_queries):
    holdable = holdable_index(index)
    with django_assert_num_queries(1 if holdable else 0):
        assert page_of_chapter(chapter.id, index) is None
        if not holdable:
            assert stream_page(chapter.id, index) is None
