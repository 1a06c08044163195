"""Each chapter of a series downloaded once, from its preferred source, and from the next source when that fails
for good: the pure choice, then the real handler against the live demo site (a second source row serves the same
site as a mirror, so both copies are real)."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from catalog import series as service
from catalog.chapter_keys import ChapterKey
from catalog.models import Chapter, Manga, MangaSource, Page, SeriesChange, Source
from crawler.audit import AuditEvent
from crawler.passes.chapters import enqueue_chapter_content, sync_chapters
from crawler.payloads import SyncManga
from crawler.series_downloads import Copy, choose, fails_for_good, wanted
from crawler.workers.handlers import JobContext
from jobs import kinds
from jobs.errors import JobCancelled
from jobs.models import Job
from jobs.queue import enqueue, lease
from jobs.worker.status.handle import StatusHandle
from sources.base import SourceChapter
from sources.errors import ImageRefused, NotFound, RetryLater, SessionExpired

C = ChapterKey


def _copy(n, key, source, state="new", dropped=False):
    return Copy(uuid.UUID(int=n), key, source, state, dropped)


K1, K2, K3 = C("chapter", None, Decimal(1)), C("chapter", None, Decimal(2)), C("chapter", 2, Decimal(1))

CHOICES = {
    "preferred source first": ([_copy(1, K1, "beta"), _copy(2, K1, "alpha")], {K1: uuid.UUID(int=2)}),
    "only one source has it": ([_copy(1, K2, "beta")], {K2: uuid.UUID(int=1)}),
    "a downloaded copy wants nothing more": ([_copy(1, K1, "alpha"), _copy(2, K1, "beta", "done")], {K1: None}),
    "a failed copy gives way to the next": (
        [_copy(1, K1, "alpha", "failed"), _copy(2, K1, "beta")],
        {K1: uuid.UUID(int=2)},
    ),
    "a dropped copy gives way to the next": (
        [_copy(1, K3, "alpha", dropped=True), _copy(2, K3, "beta")],
        {K3: uuid.UUID(int=2)},
    ),
    "every copy failed": ([_copy(1, K1, "alpha", "failed"), _copy(2, K1, "beta", "failed")], {K1: None}),
    "a source outside the order comes last": ([_copy(1, K1, "zeta"), _copy(2, K1, "beta")], {K1: uuid.UUID(int=2)}),
}


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("copies, chosen", CHOICES.values(), ids=CHOICES.keys())
def test_choose(copies, chosen):
    assert choose(copies, ["alpha", "beta"]) == chosen


@pytest.mark.sqlite_ok
def test_with_alternates_every_copy_still_to_download_is_wanted_once():
    copies = [
        _copy(1, K1, "alpha"),
        _copy(2, K1, "beta"),
        _copy(3, K2, "alpha", "done"),
        _copy(4, K2, "beta", "queued"),
        _copy(5, K3, "alpha", "failed"),
        _copy(6, K3, "beta", dropped=True),
    ]
    assert wanted(copies, ["alpha", "beta"]) == {uuid.UUID(int=1)}
    assert wanted(copies, ["alpha", "beta"], alternates=True) == {uuid.UUID(int=n) for n in (1, 2, 4)}


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "error, attempts, expected",
    [
        (ImageRefused("refused"), 1, True),
        (NotFound("gone"), 1, True),
        (RuntimeError("timeout"), 2, False),
        (RuntimeError("timeout"), 5, True),
        (RetryLater("cooling", until=datetime.now(UTC)), 5, False),
        (SessionExpired("login"), 5, False),
        (JobCancelled(), 5, False),
    ],
)
def test_fails_for_good(error, attempts, expected):
    assert fails_for_good(error, attempts, 5) is expected


# --- the real handler against the demo site ------------------------------------------------------------------


def _run(lease_):
    ctx = JobContext(lease=lease_, status=StatusHandle(), cancel=threading.Event())
    kinds.registered()[lease_.kind].handler(lease_.payload, ctx)


@pytest.fixture
def two_sources(db, demo_site, demo_source):
    """manga-0004 from the demo source and from a mirror of it, merged into one series, the demo preferred."""
    key = "manga-0004"
    enqueue(SyncManga(source_id="demo", source_manga_key=key, url=demo_site.url(f"/manga/{key}"), title=""))
    (job,) = lease(["sync_manga"], 1, timedelta(minutes=5))
    _run(job)
    first = MangaSource.objects.get(source_manga_key=key).manga
    mirror = Source.objects.create(id="mirror", name="Mirror", kind=Source.Kind.DEMO, base_url=demo_site.base_url)
    second = Manga.objects.create(title=first.title)
    MangaSource.objects.create(manga=second, source=mirror, source_manga_key=key)
    for chapter in Chapter.objects.filter(manga=first):
        Chapter.objects.create(
            manga=second,
            source=mirror,
            source_chapter_key=chapter.source_chapter_key,
            url=chapter.url,
            kind=chapter.kind,
            volume=chapter.volume,
            number=chapter.number,
            title=chapter.title,
        )
    service.merge_series(first.series, [second.series], via="test")
    service.set_source_order(first.series, ["demo", "mirror"])
    Job.objects.all().delete()
    Chapter.objects.update(sync_state=Chapter.SyncState.NEW)
    return first, second


def _queued_chapters():
    return {uuid.UUID(str(j.payload["chapter_id"])) for j in Job.objects.filter(kind="sync_chapter_content")}


def test_each_chapter_key_is_queued_once_from_the_preferred_source(two_sources):
    first, second = two_sources
    enqueue_chapter_content(Chapter.objects.filter(manga__in=[first, second]))
    assert _queued_chapters() == set(Chapter.objects.filter(manga=first).values_list("id", flat=True))
    assert set(Chapter.objects.filter(manga=second).values_list("sync_state", flat=True)) == {"new"}


def test_a_chapter_refused_on_the_first_source_is_downloaded_from_the_next(two_sources, demo_site):
    first, second = two_sources
    chapter = Chapter.objects.filter(manga=first).order_by("number").first()
    twin = Chapter.objects.get(manga=second, source_chapter_key=chapter.source_chapter_key)
    enqueue_chapter_content([chapter, twin])
    assert _queued_chapters() == {chapter.id}

    demo_site.faults.broken_image = True
    (job,) = lease(["sync_chapter_content"], 1, timedelta(minutes=5))
    with pytest.raises(ImageRefused):
        _run(job)
    assert Chapter.objects.get(pk=chapter.pk).sync_state == "failed"
    assert twin.id in _queued_chapters(), "the mirror's copy is queued at once"
    event = AuditEvent.objects.get(action="series_failover")
    assert (event.detail["from"], event.detail["to"]) == ("demo", "mirror")

    demo_site.faults.broken_image = False
    (job,) = lease(["sync_chapter_content"], 1, timedelta(minutes=5))
    assert str(job.payload.chapter_id) == str(twin.id)
    _run(job)
    assert Chapter.objects.get(pk=twin.pk).sync_state == "done"
    assert Page.objects.filter(chapter=twin).count() > 0 and not Page.objects.filter(chapter=chapter).exists()
    # Downloaded once: syncing again queues neither copy.
    Job.objects.all().delete()
    enqueue_chapter_content(Chapter.objects.filter(pk__in=[chapter.pk, twin.pk]))
    assert _queued_chapters() == set()


def test_a_chapter_gone_from_the_first_sources_list_is_queued_from_the_next(two_sources):
    first, second = two_sources
    enqueue_chapter_content(Chapter.objects.filter(manga__in=[first, second]))
    listed = list(Chapter.objects.filter(manga=first).order_by("number"))
    gone, kept = listed[0], listed[1:]
    sync_chapters(first, Source.objects.get(id="demo"), [_as_listed(c) for c in kept])
    twin = Chapter.objects.get(manga=second, source_chapter_key=gone.source_chapter_key)
    assert twin.id in _queued_chapters()
    assert not (
        _queued_chapters() & set(Chapter.objects.filter(manga=second).exclude(pk=twin.pk).values_list("id", flat=True))
    )


def _as_listed(chapter):
    return SourceChapter(
        key=chapter.source_chapter_key,
        number=chapter.number,
        title=chapter.title,
        url=chapter.url,
        kind=chapter.kind,
        volume=chapter.volume,
    )


def test_a_second_sources_copy_joins_its_series_on_arrival_so_its_chapters_are_not_queued_again(demo_site, demo_source):
    key = "manga-0004"
    Source.objects.create(id="mirror", name="Mirror", kind=Source.Kind.DEMO, base_url=demo_site.base_url)
    for source in ("demo", "mirror"):
        enqueue(SyncManga(source_id=source, source_manga_key=key, url=demo_site.url(f"/manga/{key}"), title=""))
        (job,) = lease(["sync_manga"], 1, timedelta(minutes=5))
        _run(job)
    first, second = (MangaSource.objects.get(source_id=s).manga for s in ("demo", "mirror"))
    assert first.series_id == second.series_id == first.pk, "same title and author: merged as it arrived"
    assert SeriesChange.objects.get().via == "metadata_pass"
    assert _queued_chapters() == set(Chapter.objects.filter(manga=first).values_list("id", flat=True))


def test_a_series_asked_for_alternates_downloads_every_sources_copy_once_and_keeps_them_when_turned_off(two_sources):
    first, second = two_sources
    enqueue_chapter_content(Chapter.objects.filter(manga__in=[first, second]))
    preferred = set(Chapter.objects.filter(manga=first).values_list("id", flat=True))
    mirrored = set(Chapter.objects.filter(manga=second).values_list("id", flat=True))
    assert _queued_chapters() == preferred

    # Turned on: the mirror's copies are queued at once, through the same queueing path.
    assert service.set_download_alternates(first.series, True, via="test")
    assert _queued_chapters() == preferred | mirrored
    while jobs := lease(["sync_chapter_content"], 10, timedelta(minutes=5)):
        for job in jobs:
            _run(job)
    assert set(Chapter.objects.filter(manga__in=[first, second]).values_list("sync_state", flat=True)) == {"done"}
    stored = Page.objects.filter(chapter__manga__in=[first, second]).count()
    assert stored > 0 and Page.objects.filter(chapter__manga=second).exists()

    # Never the same copy twice: queueing again finds nothing to do.
    Job.objects.all().delete()
    assert enqueue_chapter_content(Chapter.objects.filter(manga__in=[first, second])) == 0

    # Turned off: nothing stored is deleted, and the next copies follow the one-copy rule again.
    assert service.set_download_alternates(first.series, False, via="test")
    assert not service.set_download_alternates(first.series, False, via="test"), "nothing changed"
    assert Page.objects.filter(chapter__manga__in=[first, second]).count() == stored
    Chapter.objects.filter(manga__in=[first, second]).update(sync_state=Chapter.SyncState.NEW)
    enqueue_chapter_content(Chapter.objects.filter(manga__in=[first, second]))
    assert _queued_chapters() == preferred


def test_a_failed_copy_requeued_by_the_operator_is_tried_again_from_its_own_source(two_sources):
    first, second = two_sources
    chapter = Chapter.objects.filter(manga=first).order_by("number").first()
    twin = Chapter.objects.get(manga=second, source_chapter_key=chapter.source_chapter_key)
    Chapter.objects.filter(pk=chapter.pk).update(sync_state=Chapter.SyncState.FAILED)
    # The chapter sync leaves a failed copy alone: the mirror's copy is what it would queue.
    assert enqueue_chapter_content([twin]) == 1 and _queued_chapters() == {twin.id}
    Job.objects.all().delete()
    Chapter.objects.filter(pk=twin.pk).update(sync_state=Chapter.SyncState.NEW)
    # Asked for again (a requeue, lost pages repaired): the preferred source's copy is tried again, alone.
    assert enqueue_chapter_content([Chapter.objects.get(pk=chapter.pk)]) == 1
    assert _queued_chapters() == {chapter.id}
