"""The verify report's repairs: queue damaged chapters again, delete orphan files, re-export stale chapters.

Each walks one kind of a run's open findings in id batches (never all at
once) and marks what it repaired, so a repair run twice does nothing the
second time and one cut short carries on where it stopped.

- Missing or corrupt pages: the page rows (and a corrupt file) are deleted
  and the chapter is queued for download again: the download stores only
  the indexes with no row (crawler.passes.chapter_download), so the pages
  that were fine are not fetched again. Gaps are queued the same way.
  Chapters are queued in reading order, manga by manga.
- Orphans (pages, covers and their scaled copies): each file is checked
  again just before it is deleted (a row may name it, or its original, since
  the pass saw it; `upkeep.verify.stored_files.named`), and only after the
  operator confirmed.
- Stale exports: written again by the export (reader.export), which then
  announces the export so media servers rescan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import Storage, default_storage
from django.db import transaction
from django.utils import timezone

from catalog.models import Chapter, Page
from catalog.signals import library_exported
from catalog.storage import delete_stored
from crawler.passes.chapters import enqueue_chapter_content
from reader.export import chapters_to_export, export_library
from upkeep.models import VerifyFinding, VerifyRun
from upkeep.verify import stored_files

BATCH = 500
Kind = VerifyFinding.Kind
DAMAGED = (Kind.MISSING, Kind.CORRUPT, Kind.GAP)


@dataclass(frozen=True)
class Repaired:
    findings: int = 0
    chapters: int = 0  # queued again / exported again
    files: int = 0  # deleted


def _open(run: VerifyRun, kinds: tuple[str, ...]) -> Iterator[list[VerifyFinding]]:
    after = 0
    while True:
        batch = list(
            VerifyFinding.objects.filter(run=run, kind__in=kinds, repaired_at=None, id__gt=after).order_by("id")[:BATCH]
        )
        if not batch:
            return
        yield batch
        after = batch[-1].id


def _mark(findings: list[VerifyFinding]) -> None:
    VerifyFinding.objects.filter(id__in=[f.id for f in findings]).update(repaired_at=timezone.now())


def requeue_damaged(run: VerifyRun, *, storage: Storage | None = None) -> Repaired:
    """Drop the missing and corrupt pages' rows (and corrupt files), queue their chapters and the gaps again."""
    storage = storage or default_storage
    total = Repaired()
    for batch in _open(run, DAMAGED):
        page_ids = [f.page_id for f in batch if f.kind != Kind.GAP and f.page_id is not None]
        corrupt = [f.name for f in batch if f.kind == Kind.CORRUPT and f.name]
        chapter_ids = {f.chapter_id for f in batch if f.chapter_id is not None}
        with transaction.atomic():
            Page.objects.filter(id__in=page_ids).delete()
            chapters = list(Chapter.objects.filter(id__in=chapter_ids).order_by("manga_id"))
            # A chapter whose pages were removed is not done any more: the queue takes only chapters not done.
            Chapter.objects.filter(id__in=chapter_ids, sync_state=Chapter.SyncState.DONE).update(
                sync_state=Chapter.SyncState.FAILED, updated_at=timezone.now()
            )
            for chapter in chapters:
                if chapter.sync_state == Chapter.SyncState.DONE:
                    chapter.sync_state = Chapter.SyncState.FAILED
            queued = 0
            for manga_chapters in _by_manga(chapters):
                enqueue_chapter_content(manga_chapters)  # in reading order (it sorts them)
                queued += len(manga_chapters)
            _mark(batch)
        for name in corrupt:  # after the commit: a rollback must not leave rows naming deleted files
            delete_stored(name, storage=storage)
        total = Repaired(total.findings + len(batch), total.chapters + queued, total.files + len(corrupt))
    return total


def _by_manga(chapters: list[Chapter]) -> Iterator[list[Chapter]]:
    group: list[Chapter] = []
    for chapter in chapters:
        if group and group[0].manga_id != chapter.manga_id:
            yield group
            group = []
        group.append(chapter)
    if group:
        yield group


def delete_orphans(run: VerifyRun, *, confirmed: bool, storage: Storage | None = None) -> Repaired:
    """Delete the orphan files the run found that still nothing names; refused unless `confirmed`."""
    if not confirmed:
        raise PermissionError("deleting orphan files needs a confirmation (--yes, or the form's confirm box)")
    storage = storage or default_storage
    total = Repaired()
    for batch in _open(run, (Kind.ORPHAN,)):
        names = [f.name for f in batch]
        named = stored_files.named(names)
        deleted = [name for name in names if name not in named]
        for name in deleted:
            delete_stored(name, storage=storage)
        _mark(batch)
        total = Repaired(total.findings + len(batch), 0, total.files + len(deleted))
    return total


def reexport_stale(run: VerifyRun, *, directory: str = "") -> Repaired:
    """Write the stale chapters again into the run's export folder (or `directory`), then announce the export."""
    root = Path(directory or run.export_dir)
    if not str(root) or not root.is_dir():
        raise FileNotFoundError(
            f"export folder {str(root)!r} does not exist: pass --export-dir or set LIBRARY_EXPORT_DIR"
        )
    total = Repaired()
    written = 0
    for batch in _open(run, (Kind.STALE,)):
        chapter_ids = [f.chapter_id for f in batch if f.chapter_id is not None]
        stats = export_library(root, chapters_to_export().filter(id__in=chapter_ids))
        written += stats.written + stats.moved
        _mark(batch)
        total = Repaired(total.findings + len(batch), total.chapters + stats.written, 0)
    library_exported.send(reexport_stale, directory=root, written=written)
    return total
