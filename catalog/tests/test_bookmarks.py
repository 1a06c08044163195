"""The bookmark hook: a new bookmark queues the manga's missing chapters, ascending, from the bookmarked one on."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from catalog import series as service
from catalog.bookmarks import chapters_to_fetch, create_bookmark
from catalog.models import Bookmark, Chapter, Manga
from jobs import queue
from jobs.models import Job
from testsupport import api_factories as f


@pytest.fixture
def manga_with_chapters(db):
    """Chapters created out of order; 2 is already downloaded, 4 was dropped by the source."""
    src = f.source("demo")
    m = f.manga("Berserk", src=src)
    chapters = {}
    for number in ("10.5", "3", "1", "4", "2", "10", "11"):
        chapters[number] = f.chapter(m, number, src=src)
    Chapter.objects.filter(id=chapters["2"].id).update(sync_state=Chapter.SyncState.DONE)
    Chapter.objects.filter(id=chapters["4"].id).update(dropped_at=timezone.now())
    other = f.manga("Other", src=src)
    f.chapter(other, 1, src=src)
    return m, {k: Chapter.objects.get(id=v.id) for k, v in chapters.items()}


def queued_numbers() -> list[str]:
    """Chapter numbers of queued content jobs in insertion order (the lease tie-break)."""
    jobs = Job.objects.filter(kind="sync_chapter_content").order_by("created_at")
    numbers = dict(Chapter.objects.values_list("id", "number"))
    return [f"{numbers[j.chapter_id].normalize():f}" for j in jobs]


def leased_numbers() -> list[str]:
    """The order workers will receive them in."""
    leases = queue.lease(["sync_chapter_content"], 100, timedelta(minutes=1))
    numbers = dict(Chapter.objects.values_list("id", "number"))
    return [f"{numbers[lease.payload.chapter_id].normalize():f}" for lease in leases]


@pytest.mark.sqlite_ok
def test_manga_bookmark_queues_missing_chapters_in_ascending_number(alice, manga_with_chapters):
    m, _ = manga_with_chapters
    create_bookmark(user=alice, manga=m)
    assert queued_numbers() == ["1", "3", "10", "10.5", "11"]
    assert leased_numbers() == ["1", "3", "10", "10.5", "11"]


@pytest.mark.sqlite_ok
def test_chapter_bookmark_queues_from_that_chapter_onward(alice, manga_with_chapters):
    m, chapters = manga_with_chapters
    create_bookmark(user=alice, manga=m, chapter=chapters["3"])
    assert queued_numbers() == ["3", "10", "10.5", "11"]


@pytest.mark.sqlite_ok
def test_second_bookmark_does_not_duplicate_jobs_already_in_flight(alice, staff, manga_with_chapters):
    m, chapters = manga_with_chapters
    create_bookmark(user=alice, manga=m, chapter=chapters["10"])
    create_bookmark(user=staff, manga=m)
    assert queued_numbers() == ["10", "10.5", "11", "1", "3"]
    assert Job.objects.filter(kind="sync_chapter_content").count() == 5


@pytest.mark.sqlite_ok
def test_bookmark_on_a_fully_downloaded_manga_queues_nothing(alice, db):
    src = f.source("demo")
    m = f.manga(src=src)
    f.chapter(m, 1, src=src, sync_state=Chapter.SyncState.DONE)
    create_bookmark(user=alice, manga=m)
    assert Bookmark.objects.filter(user=alice, manga=m).exists()
    assert not Job.objects.exists()


@pytest.mark.sqlite_ok
def test_chapters_to_fetch_excludes_done_and_dropped(manga_with_chapters):
    m, chapters = manga_with_chapters
    assert [c.number for c in chapters_to_fetch(m, chapters["10"])] == [
        chapters[n].number for n in ("10", "10.5", "11")
    ]


# (bookmarked chapter, chapters the hook wants): onward in reading order, extras after the whole story.
FROM_CHAPTER = {
    "a main chapter: the rest of the story, then every extra": ("v2c2", ["v2c2", "v-less 3", "ss1", "ss2"]),
    "a volume's chapter: later volumes and chapters not yet in one": (
        "v2c1",
        ["v2c1", "v2c2", "v-less 3", "ss1", "ss2"],
    ),
    "an extra: the extras from it on, no main chapter": ("ss2", ["ss2"]),
}


@pytest.mark.parametrize(("bookmarked", "wanted"), FROM_CHAPTER.values(), ids=FROM_CHAPTER.keys())
def test_a_chapter_bookmark_fetches_onward_in_reading_order_not_by_number(db, bookmarked, wanted):
    src = f.source("demo")
    m = f.manga("Harbour", src=src)
    rows = {
        "ss2": f.chapter(m, 2, src=src, kind="extra", title="Side Story 2"),
        "v-less 3": f.chapter(m, 3, src=src),
        "v1c1": f.chapter(m, 1, src=src, volume=1),
        "v2c1": f.chapter(m, 1, src=src, volume=2),
        "ss1": f.chapter(m, 1, src=src, kind="extra", title="Side Story 1"),
        "v2c2": f.chapter(m, 2, src=src, volume=2),
    }
    names = {row.id: name for name, row in rows.items()}
    assert [names[c.id] for c in chapters_to_fetch(m, rows[bookmarked])] == wanted


@pytest.mark.sqlite_ok
def test_bookmarking_a_series_queues_each_missing_chapter_key_once_from_the_preferred_source(alice, settings):
    settings.SERIES_SOURCE_PRIORITY = ["beta", "alpha"]
    alpha, beta = f.source("alpha"), f.source("beta")
    first, second = f.manga("Tide", src=alpha), f.manga("Tide", src=beta)
    for number in (1, 2, 3):
        f.chapter(first, number, src=alpha)
    for number in (2, 3, 4):
        f.chapter(second, number, src=beta)
    Chapter.objects.filter(manga=first, number=3).update(sync_state=Chapter.SyncState.DONE)
    service.merge_series(first.series, [second.series], via="test")
    create_bookmark(user=alice, manga=Manga.objects.get(pk=second.pk))
    queued = Chapter.objects.filter(pk__in=Job.objects.filter(kind="sync_chapter_content").values("chapter_id"))
    assert sorted((c.source_id, int(c.number)) for c in queued) == [("alpha", 1), ("beta", 2), ("beta", 4)]
    assert Bookmark.objects.get(user=alice).manga_id == first.pk


@pytest.mark.sqlite_ok
def test_a_chapter_bookmark_in_a_merged_series_wants_that_key_and_the_later_ones_from_every_source(alice):
    alpha, beta = f.source("alpha"), f.source("beta")
    first, second = f.manga("Tide", src=alpha), f.manga("Tide", src=beta)
    later = {n: f.chapter(second, n, src=beta) for n in (1, 2, 3)}  # beta's copies arrived first
    mine = {n: f.chapter(first, n, src=alpha) for n in (1, 2)}
    service.merge_series(first.series, [second.series], via="test")
    wanted = chapters_to_fetch(Manga.objects.get(pk=first.pk), mine[2])
    assert {c.id for c in wanted} == {mine[2].id, later[2].id, later[3].id}


@pytest.mark.sqlite_ok
def test_bookmarking_a_series_bookmarked_on_another_copy_returns_that_bookmark(alice):
    first, second = f.manga("Tide"), f.manga("Tide")
    on_copy = Bookmark.objects.create(user=alice, manga=second)
    service.merge_series(first.series, [second.series], via="test")
    assert create_bookmark(user=alice, manga=Manga.objects.get(pk=first.pk)) == on_copy
    assert Bookmark.objects.filter(user=alice).count() == 1
