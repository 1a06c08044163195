"""Chapter sync against PostgreSQL: number-ordered content jobs, soft-drop, revive."""

from datetime import timedelta
from decimal import Decimal

import pytest

from catalog.models import Chapter, Manga, Source
from crawler.passes.chapters import enqueue_chapter_content, sync_chapters
from jobs.models import Job
from jobs.queue import lease
from sources.base import SourceChapter

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


@pytest.fixture
def source_row():
    return Source.objects.create(id="shelf", name="Shelf", kind="html", base_url="http://127.0.0.1:9/")


@pytest.fixture
def manga():
    return Manga.objects.create(title="Blue Harbour")


def chapters(*numbers):
    return [SourceChapter(key=f"ch-{n}", number=Decimal(n), title=f"Chapter {n}") for n in numbers]


def leased_chapter_numbers():
    leases = lease(["sync_chapter_content"], 100, timedelta(minutes=1))
    by_id = {c.id: c for c in Chapter.objects.all()}
    return [format(by_id[lz.payload.chapter_id].number.normalize(), "f") for lz in leases]


def test_sync_chapters_inserts_new_chapters_and_enqueues_content_in_number_order(source_row, manga):
    # Source lists newest first, with a decimal chapter between 2 and 3.
    result = sync_chapters(manga, source_row, chapters("10", "3", "2.5", "2", "1"))

    assert (result.new, result.dropped, result.revived) == (5, 0, 0)
    assert Chapter.objects.filter(manga=manga).count() == 5
    assert leased_chapter_numbers() == ["1", "2", "2.5", "3", "10"]
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {"queued"}


def test_second_sync_of_unchanged_list_finds_nothing_new_and_enqueues_nothing(source_row, manga):
    sync_chapters(manga, source_row, chapters("2", "1"))
    jobs_before = Job.objects.count()

    result = sync_chapters(manga, source_row, chapters("2", "1"))

    assert (result.new, result.dropped, result.revived) == (0, 0, 0)
    assert Job.objects.count() == jobs_before


def test_new_chapter_on_a_later_sync_is_the_only_one_enqueued(source_row, manga):
    sync_chapters(manga, source_row, chapters("2", "1"))
    Job.objects.all().delete()
    Chapter.objects.update(sync_state="done")

    result = sync_chapters(manga, source_row, chapters("3", "2", "1"))

    assert result.new == 1
    assert leased_chapter_numbers() == ["3"]


def test_vanished_chapter_is_soft_dropped_and_comes_back_revived(source_row, manga):
    sync_chapters(manga, source_row, chapters("3", "2", "1"))
    Chapter.objects.update(sync_state="done", page_count=4)

    dropped = sync_chapters(manga, source_row, chapters("3", "1"))
    two = Chapter.objects.get(source_chapter_key="ch-2")
    assert (dropped.new, dropped.dropped) == (0, 1)
    assert two.dropped_at is not None
    assert two.page_count == 4, "a soft drop keeps the row and its pages"

    revived = sync_chapters(manga, source_row, chapters("3", "2", "1"))
    two.refresh_from_db()
    assert (revived.new, revived.dropped, revived.revived) == (0, 0, 1)
    assert two.dropped_at is None


def test_chapter_left_new_by_an_interrupted_sync_is_enqueued_by_the_next(source_row, manga):
    # As if the process died between inserting the chapter and enqueueing it.
    Chapter.objects.create(manga=manga, source=source_row, source_chapter_key="ch-1", number=Decimal("1"))

    result = sync_chapters(manga, source_row, chapters("1"))

    assert result.new == 0
    assert leased_chapter_numbers() == ["1"]


def test_queued_chapter_whose_job_is_gone_is_enqueued_again_by_the_next_sync(source_row, manga):
    # E.g. its job was acked as a no-op while the source was disabled.
    sync_chapters(manga, source_row, chapters("2", "1"))
    Job.objects.filter(chapter__source_chapter_key="ch-1").delete()

    sync_chapters(manga, source_row, chapters("2", "1"))

    assert sorted(leased_chapter_numbers()) == ["1", "2"]
    assert Job.objects.count() == 2, "the job still in flight is not duplicated"


def test_failed_chapter_is_left_for_the_operator(source_row, manga):
    sync_chapters(manga, source_row, chapters("1"))
    Job.objects.all().delete()
    Chapter.objects.update(sync_state="failed")
    sync_chapters(manga, source_row, chapters("1"))
    assert not Job.objects.exists()


def test_sync_keeps_latest_chapter_at_on_the_newest_live_chapter(source_row, manga):
    sync_chapters(manga, source_row, chapters("2", "1"))
    manga.refresh_from_db()
    newest = Chapter.objects.order_by("-created_at").first()
    assert manga.latest_chapter_at == newest.created_at


def test_sync_follows_a_renamed_chapter(source_row, manga):
    sync_chapters(manga, source_row, chapters("1"))
    sync_chapters(manga, source_row, [SourceChapter(key="ch-1", number=Decimal("1"), title="The Return")])
    assert Chapter.objects.get(source_chapter_key="ch-1").title == "The Return"


def test_enqueue_chapter_content_skips_downloaded_and_dropped_chapters_and_orders_by_number(source_row, manga):
    sync_chapters(manga, source_row, chapters("4", "3", "2", "1"))
    Job.objects.all().delete()
    Chapter.objects.filter(source_chapter_key="ch-1").update(sync_state="done")
    Chapter.objects.filter(source_chapter_key="ch-3").update(dropped_at="2026-01-01T00:00:00Z")

    inserted = enqueue_chapter_content(Chapter.objects.order_by("-number"))

    assert inserted == 2
    assert leased_chapter_numbers() == ["2", "4"]


def test_enqueue_chapter_content_twice_does_not_duplicate_in_flight_jobs(source_row, manga):
    sync_chapters(manga, source_row, chapters("1"))
    assert enqueue_chapter_content(Chapter.objects.all()) == 0
    assert Job.objects.filter(kind="sync_chapter_content").count() == 1
