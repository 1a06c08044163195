"""Chapter list sync and chapter-content enqueueing.

`sync_chapters` diffs a manga's chapter list from the source against the
database: new chapters are inserted and queued for download, vanished ones are
soft-dropped (`dropped_at` set, files kept), ones that come back are revived.
Content jobs go in reading order (10.5 between 10 and 11, extras after the
main chapters: catalog.chapter_order) so chapter 1 leaves the queue before
chapter 2; the bookmark hook reuses
`enqueue_chapter_content` for the same ordering.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from catalog import series_leads
from catalog.chapter_numbers import CHAPTER
from catalog.models import Chapter, Manga, Source
from crawler import audit, download_policy, series_downloads
from crawler.payloads import SyncChapterContent
from jobs.queue import enqueue_many
from sources.base import SourceChapter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChapterSyncResult:
    new: int
    dropped: int
    revived: int


@dataclass(frozen=True)
class ChapterDiff:
    new: list[str]
    dropped: list[str]
    revived: list[str]


def diff_chapters(existing: dict[str, bool], source_keys: Sequence[str]) -> ChapterDiff:
    """Compare stored chapters (key -> is dropped) with the keys the source lists now.

    New: listed, never stored. Dropped: stored live, no longer listed.
    Revived: stored as dropped, listed again. Keys keep the source's order.
    """
    listed = set(source_keys)
    return ChapterDiff(
        new=[k for k in source_keys if k not in existing],
        dropped=sorted(k for k, dropped in existing.items() if not dropped and k not in listed),
        revived=[k for k in source_keys if existing.get(k) is True],
    )


def chapter_order(
    number: Decimal, key: str, kind: str = CHAPTER, volume: int | None = None
) -> tuple[str, bool, int, Decimal, str]:
    """Download order: reading order (catalog.chapter_order: main chapters by volume and number, extras after),
    the key breaking ties deterministically."""
    return (kind, volume is None, volume or 0, number, key)


def sync_chapters(manga: Manga, source_row: Source, source_chapters: Sequence[SourceChapter]) -> ChapterSyncResult:
    """Bring the stored chapter list of `manga` on `source_row` in line with the source's list.

    Chapters still waiting for their download (`new` or `queued`) are offered
    to the queue again (on a `followed` source only when the manga is
    bookmarked: crawler.download_policy); the in-flight dedup skips those whose job is pending or
    running, and re-queues those whose job is gone (a crash between insert and
    enqueue, a job dropped while its source was disabled), so no chapter is
    stranded without a job. A chapter whose job went dead is `failed` and
    stays for the operator's requeue.
    """
    listed = _dedupe(source_chapters)
    stored = {c.source_chapter_key: c for c in Chapter.objects.filter(manga=manga, source=source_row)}
    diff = diff_chapters({k: c.dropped_at is not None for k, c in stored.items()}, list(listed))
    inserted = _insert(manga, source_row, [listed[k] for k in diff.new])
    now = timezone.now()
    ours = Chapter.objects.filter(manga=manga, source=source_row)
    if diff.dropped:
        ours.filter(source_chapter_key__in=diff.dropped, dropped_at__isnull=True).update(dropped_at=now, updated_at=now)
        # A chapter gone from this source before it was downloaded is downloaded from the series' next source.
        gone = ours.filter(source_chapter_key__in=diff.dropped).exclude(sync_state=Chapter.SyncState.DONE)
        enqueue_chapter_content(series_downloads.replacements(list(gone)))
    if diff.revived:
        ours.filter(source_chapter_key__in=diff.revived).update(dropped_at=None, updated_at=now)
    _update_changed(stored, listed)
    waiting = ours.filter(
        dropped_at__isnull=True, sync_state__in=[Chapter.SyncState.NEW, Chapter.SyncState.QUEUED]
    ) | ours.filter(source_chapter_key__in=diff.revived)
    # A `followed` source downloads pages only for bookmarked mangas; the rest stay `new` (not wanted).
    if download_policy.wants_pages_of(source_row, manga):
        enqueue_chapter_content(waiting)
    _refresh_latest_chapter_at(manga)
    if diff.dropped or inserted:
        logger.info(
            "chapter sync manga=%s new=%d dropped=%d revived=%d",
            manga.id,
            len(inserted),
            len(diff.dropped),
            len(diff.revived),
        )
    return ChapterSyncResult(new=len(inserted), dropped=len(diff.dropped), revived=len(diff.revived))


def enqueue_chapter_content(chapters: Iterable[Chapter]) -> int:
    """Queue `sync_chapter_content` for each chapter not yet downloaded, lowest number first, once per series.

    Dropped chapters are left alone (the source no longer serves them). A
    chapter whose job is already in flight is skipped by the queue's dedup.
    Returns how many jobs were inserted.
    """
    pending = [c for c in chapters if c.sync_state != Chapter.SyncState.DONE and c.dropped_at is None]
    # A chapter another source of its series downloads instead is left `new` (crawler.series_downloads).
    todo = sorted(
        series_downloads.only_wanted(pending),
        key=lambda c: chapter_order(c.number, c.source_chapter_key, c.kind, c.volume),
    )
    if not todo:
        return 0
    payloads = [
        SyncChapterContent(source_id=c.source_id, chapter_id=c.id, source_chapter_key=c.source_chapter_key)
        for c in todo
    ]
    # enqueue_many keeps the given order through to lease order.
    inserted = sum(result.inserted for result in enqueue_many(payloads))
    # Inserted or already in flight: either way a job will download it.
    Chapter.objects.filter(
        id__in=[c.id for c in todo], sync_state__in=[Chapter.SyncState.NEW, Chapter.SyncState.FAILED]
    ).update(sync_state=Chapter.SyncState.QUEUED, updated_at=timezone.now())
    return inserted


def fail_over(chapter: Chapter, *, reason: str) -> Chapter | None:
    """Queue the next source's copy of `chapter`, which failed for good, and say so in the audit log; None when
    no other source of its series has one to try."""
    Chapter.objects.filter(pk=chapter.pk).update(sync_state=Chapter.SyncState.FAILED, updated_at=timezone.now())
    replacement = series_downloads.next_copy(chapter)
    if replacement is None:
        return None
    enqueue_chapter_content([replacement])
    detail = {"from": chapter.source_id, "to": replacement.source_id, "chapter": str(replacement.id), "reason": reason}
    audit.record(None, "series_failover", scope="chapter", target_id=chapter.id, detail=detail)
    logger.info("chapter %s failed for good on %s: %s's copy queued", chapter.id, chapter.source_id, detail["to"])
    return replacement


def _dedupe(chapters: Sequence[SourceChapter]) -> dict[str, SourceChapter]:
    """Keyed by source key, first listing wins (a source may repeat a chapter on its page)."""
    listed: dict[str, SourceChapter] = {}
    for chapter in chapters:
        listed.setdefault(chapter.key, chapter)
    return listed


def _fields_from_source(chapter: SourceChapter) -> dict[str, object]:
    return {
        "kind": chapter.kind,
        "volume": chapter.volume,
        "number": chapter.number,
        "title": chapter.title[: Chapter._meta.get_field("title").max_length],
        "url": chapter.url,
        "published_at": chapter.published_at,
    }


def _insert(manga: Manga, source_row: Source, chapters: list[SourceChapter]) -> list[Chapter]:
    """Insert new chapters; returns the rows this call actually created.

    A concurrent sync of the same manga may insert the same keys first;
    `ignore_conflicts` lets it win and the re-read tells which rows are ours.
    """
    if not chapters:
        return []
    rows = [
        Chapter(manga=manga, source=source_row, source_chapter_key=c.key, **_fields_from_source(c)) for c in chapters
    ]
    Chapter.objects.bulk_create(rows, ignore_conflicts=True)
    created = list(Chapter.objects.filter(id__in=[r.id for r in rows]))
    if len(created) < len(rows):
        taken = sorted({r.source_chapter_key for r in rows} - {c.source_chapter_key for c in created})
        logger.warning(
            "chapter sync manga=%s: %d chapter key(s) already stored (concurrent sync, or the key is used by "
            "another manga of this source: set chapter_key_pattern): %s",
            manga.id,
            len(taken),
            ", ".join(taken[:5]),
        )
    return created


def _update_changed(stored: dict[str, Chapter], listed: dict[str, SourceChapter]) -> None:
    """Follow the source when it renumbers, retitles, reclassifies (chapter/extra, volume) or moves a chapter."""
    changed = []
    for key, row in stored.items():
        source = listed.get(key)
        if source is None:
            continue
        fields = _fields_from_source(source)
        if any(getattr(row, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(row, name, value)
            changed.append(row)
    if changed:
        Chapter.objects.bulk_update(changed, ["kind", "volume", "number", "title", "url", "published_at"])


def _refresh_latest_chapter_at(manga: Manga) -> None:
    """Keep the denormalised "latest chapter" time the library list orders by.

    A series' lead carries its whole series' newest chapter (readers list leads only), so the lead counts every
    copy's chapters and any other copy raises its lead's time when it got a newer chapter.
    """
    # Read afresh: a merge on arrival (the metadata pass) may have moved this manga since it was loaded.
    leads, series_id = Manga.objects.values_list("leads_series", "series_id").get(pk=manga.pk)
    scope = Chapter.objects.filter(manga__series_id=series_id) if leads else Chapter.objects.filter(manga=manga)
    latest = scope.filter(dropped_at__isnull=True).aggregate(at=Max(Coalesce("published_at", "created_at")))["at"]
    if latest != manga.latest_chapter_at:
        manga.latest_chapter_at = latest
        manga.save(update_fields=["latest_chapter_at"])
    if not leads:
        series_leads.raise_lead_date(series_id, latest)
