"""Export the library as CBZ files: DIR/<Series>/<Series> - c<number>[ - <title>].cbz, the layout Komga and Kavita import.

Each file is written to a temp file beside its target, fsynced and renamed,
so a scanner never sees half an archive, with the mode the umask gives (0644
under the usual 022) so a Komga or Kavita running as another user reads it.
Its mtime is set to the chapter's (or manga's, whichever is newer) last
change: a re-run skips every file whose mtime already says so, and rewrites
the ones whose chapter or metadata moved.

Names are unique per manga and per chapter: when two mangas (or two chapters
of one manga) map to the same name on a case-insensitive file system, the
oldest keeps it and the others add a short tag made from their own id, so a
name never changes because of export order. `.mangalord-export.json` in the
root remembers where each chapter went, so a retitled manga or chapter is
moved to its new name instead of being written twice.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga
from reader.cbz import chapter_zip
from reader.naming import MAX_BYTES, cbz_filename, safe_filename

MANIFEST = ".mangalord-export.json"
TAG_LENGTH = 8


@dataclass
class ExportStats:
    written: int = 0
    skipped: int = 0
    moved: int = 0


@dataclass(frozen=True)
class Named:
    """What a name is decided from: our id, the name wanted, and the order that says who keeps it."""

    id: Any
    wanted: str
    created_at: datetime


def unique_names(rows: Iterable[Named], name: Callable[[Named, str], str]) -> dict[Any, str]:
    """Each row's final name: the oldest of rows wanting one name (case-insensitively) keeps it, the rest add a tag.

    `name(row, tag)` builds the name with a tag ("" for none); the tag is the
    first hex digits of the row's id, so it never changes between runs.
    """
    groups: dict[str, list[Named]] = {}
    for row in rows:
        groups.setdefault(name(row, "").casefold(), []).append(row)
    names: dict[Any, str] = {}
    for group in groups.values():
        ordered = sorted(group, key=lambda r: (r.created_at, str(r.id)))
        names[ordered[0].id] = name(ordered[0], "")
        for row in ordered[1:]:
            names[row.id] = name(row, _hex(row.id)[:TAG_LENGTH])
    return names


def series_folder(title: str, tag: str = "") -> str:
    if not tag:
        return safe_filename(title)
    return safe_filename(title, max_bytes=MAX_BYTES - len(tag) - 3) + f" [{tag}]"


def series_folders() -> dict[Any, str]:
    """The folder of every manga in the library (all of them, so a folder never depends on which ones export)."""
    rows = (Named(i, t, c) for i, t, c in Manga.objects.values_list("id", "title", "created_at").iterator())
    return unique_names(rows, lambda row, tag: series_folder(row.wanted, tag))


def chapter_files(manga_id: Any, series: str) -> dict[Any, str]:
    """The file name of every exportable chapter of one manga."""
    chapters = (
        _exportable().filter(manga_id=manga_id).values_list("id", "number", "title", "kind", "volume", "created_at")
    )
    names = {i: (n, t, k, v) for i, n, t, k, v, _ in chapters}
    rows = [Named(i, "", c) for i, *_, c in chapters]

    def name(row: Named, tag: str) -> str:
        number, title, kind, volume = names[row.id]
        return cbz_filename(series, number, title, tag=tag, kind=kind, volume=volume)

    return unique_names(rows, name)


def _exportable() -> QuerySet[Chapter]:
    return Chapter.objects.filter(
        dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE, pages__isnull=False
    ).distinct()


def chapters_to_export(manga_ids: Iterable[str] = (), since: datetime | None = None) -> QuerySet[Chapter]:
    chapters = _exportable()
    ids = list(manga_ids)
    if ids:
        chapters = chapters.filter(manga_id__in=ids)
    if since is not None:
        chapters = chapters.filter(updated_at__gte=since)
    return (
        chapters.select_related("manga", "source")
        .prefetch_related("manga__tags")
        .order_by("manga__title", "manga_id", *READING_ORDER)
    )


def stamp(chapter: Chapter) -> int:
    """Whole seconds: every file system keeps at least that much of an mtime."""
    return stamp_of(chapter.updated_at, chapter.manga.updated_at)


def stamp_of(chapter_updated_at: datetime, manga_updated_at: datetime) -> int:
    """The mtime an exported chapter's file carries: its chapter's or manga's last change, whichever is newer."""
    return int(max(chapter_updated_at, manga_updated_at).timestamp())


def is_current(path: Path, chapter: Chapter) -> bool:
    try:
        return int(path.stat().st_mtime) == stamp(chapter)
    except FileNotFoundError:
        return False


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_cbz(path: Path, chapter: Chapter, *, umask: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".cbz.part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chapter_zip(chapter):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes 0600 files; the library is read by a media server under another user.
        os.chmod(temp, 0o666 & ~umask)
        os.utime(temp, (stamp(chapter), stamp(chapter)))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class Manifest:
    """Where each chapter was last exported, relative to the root; saved atomically."""

    def __init__(self, root: Path, umask: int) -> None:
        self.path = root / MANIFEST
        self.umask = umask
        try:
            self.places: dict[str, str] = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            self.places = {}

    def save(self) -> None:
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".json.part")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(self.places, out, ensure_ascii=False, sort_keys=True)
        os.chmod(temp, 0o666 & ~self.umask)
        os.replace(temp, self.path)


def move_if_renamed(root: Path, manifest: Manifest, chapter_id: str, relative: str) -> bool:
    """Move the chapter's file from where the manifest last saw it; True when it moved."""
    previous = manifest.places.get(chapter_id)
    manifest.places[chapter_id] = relative
    if previous is None or previous == relative:
        return False
    old, new = root / previous, root / relative
    if not old.is_file() or new.exists():
        return False
    new.parent.mkdir(parents=True, exist_ok=True)
    os.replace(old, new)
    try:
        old.parent.rmdir()  # only when the series folder is now empty
    except OSError:
        pass
    return True


def _planned(chapters: QuerySet[Chapter]) -> Iterator[tuple[Chapter, str]]:
    folders = series_folders()
    files: dict[Any, str] = {}
    current_manga = None
    for chapter in chapters.iterator(chunk_size=200):
        folder = folders[chapter.manga_id]
        if chapter.manga_id != current_manga:
            current_manga = chapter.manga_id
            files = chapter_files(chapter.manga_id, folder)
        yield chapter, f"{folder}/{files[chapter.id]}"


def export_library(
    root: Path, chapters: QuerySet[Chapter], on_chapter: Callable[[Chapter, bool], None] | None = None
) -> ExportStats:
    """Write every chapter of `chapters` under `root`, skipping those already current; `on_chapter(chapter, written)` after each."""
    stats = ExportStats()
    umask = current_umask()
    manifest = Manifest(root, umask)
    try:
        for done, (chapter, relative) in enumerate(_planned(chapters), start=1):
            path = root / relative
            stats.moved += move_if_renamed(root, manifest, str(chapter.id), relative)
            written = not is_current(path, chapter)
            if written:
                write_cbz(path, chapter, umask=umask)
                stats.written += 1
            else:
                stats.skipped += 1
            if on_chapter is not None:
                on_chapter(chapter, written)
            if done % 200 == 0:
                manifest.save()
    finally:
        manifest.save()
    return stats


def _hex(value: Any) -> str:
    return getattr(value, "hex", str(value).replace("-", ""))
