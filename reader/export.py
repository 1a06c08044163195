"""Export the library as CBZ files: DIR/<Series>/<Series> - c<number>.cbz, the layout Komga and Kavita import.

Each file is written to a temp file beside its target, fsynced and renamed,
so a scanner never sees half an archive. Its mtime is set to the chapter's
(or manga's, whichever is newer) last change: a re-run skips every file whose
mtime already says so, and rewrites the ones whose chapter or metadata moved.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db.models import QuerySet

from catalog.models import Chapter
from reader.cbz import chapter_zip
from reader.naming import cbz_filename, safe_filename


@dataclass
class ExportStats:
    written: int = 0
    skipped: int = 0


def chapters_to_export(manga_ids: Iterable[str] = (), since: datetime | None = None) -> QuerySet[Chapter]:
    chapters = Chapter.objects.filter(
        dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE, pages__isnull=False
    ).distinct()
    ids = list(manga_ids)
    if ids:
        chapters = chapters.filter(manga_id__in=ids)
    if since is not None:
        chapters = chapters.filter(updated_at__gte=since)
    return (
        chapters.select_related("manga", "source")
        .prefetch_related("manga__tags")
        .order_by("manga__title", "manga_id", "number")
    )


def target_path(root: Path, chapter: Chapter) -> Path:
    series = chapter.manga.title
    return root / safe_filename(series) / cbz_filename(series, chapter.number)


def stamp(chapter: Chapter) -> int:
    """Whole seconds: every file system keeps at least that much of an mtime."""
    return int(max(chapter.updated_at, chapter.manga.updated_at).timestamp())


def is_current(path: Path, chapter: Chapter) -> bool:
    try:
        return int(path.stat().st_mtime) == stamp(chapter)
    except FileNotFoundError:
        return False


def write_cbz(path: Path, chapter: Chapter) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".cbz.part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chapter_zip(chapter):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.utime(temp, (stamp(chapter), stamp(chapter)))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def export_library(
    root: Path, chapters: QuerySet[Chapter], on_chapter: Callable[[Chapter, bool], None] | None = None
) -> ExportStats:
    """Write every chapter of `chapters` under `root`, skipping those already current; `on_chapter(chapter, written)` after each."""
    stats = ExportStats()
    for chapter in chapters.iterator(chunk_size=200):
        path = target_path(root, chapter)
        written = not is_current(path, chapter)
        if written:
            write_cbz(path, chapter)
            stats.written += 1
        else:
            stats.skipped += 1
        if on_chapter is not None:
            on_chapter(chapter, written)
    return stats
