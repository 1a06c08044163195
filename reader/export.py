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

A manga crawled from several sources is one series and one folder: its
lead's (catalog.series_leads), named as that manga's folder always was, so
the folder of a manga no merge touched never moves. It holds the chapters
readers show (catalog.series_books), each chapter key once from the
preferred copy. When a merge, a split or a new source order changes which
copy is shown, the next run writes the new one under the key's name and
deletes the file it had written for the other copy.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga
from catalog.series_books import chapter_union
from reader.cbz import SeriesFacts, chapter_zip, series_tags
from reader.naming import MAX_BYTES, cbz_filename, safe_filename

MANIFEST = ".mangalord-export.json"
TAG_LENGTH = 8


@dataclass
class ExportStats:
    written: int = 0
    skipped: int = 0
    moved: int = 0
    removed: int = 0


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


@dataclass(frozen=True)
class Layout:
    """The library's series as the export lays them out: each one's folder (its lead's) and lead, and which
    series hold several mangas."""

    folders: dict[str, str]
    leads: dict[str, Any]
    merged: set[str]


def library_layout() -> Layout:
    """Read every manga once: folder names are decided among all of them, as they were before series, so a
    folder never depends on which mangas export nor on merges elsewhere in the library."""
    rows = list(Manga.objects.values_list("id", "title", "created_at", "series_id", "leads_series").iterator())
    names = unique_names((Named(i, t, c) for i, t, c, _, _ in rows), lambda row, tag: series_folder(row.wanted, tag))
    leads = {str(series): i for i, _, _, series, lead in rows if lead}
    counts = Counter(str(series) for *_, series, _ in rows)
    return Layout({s: names[i] for s, i in leads.items()}, leads, {s for s, n in counts.items() if n > 1})


def chapter_files(chapters: QuerySet[Chapter], series: str) -> dict[Any, str]:
    """The file name of every exportable chapter of `chapters` (one series' shown chapters)."""
    rows = _exportable().filter(pk__in=chapters.values("pk"))
    found = rows.values_list("id", "number", "title", "kind", "volume", "created_at")
    names = {i: (n, t, k, v) for i, n, t, k, v, _ in found}
    named = [Named(i, "", c) for i, *_, c in found]

    def name(row: Named, tag: str) -> str:
        number, title, kind, volume = names[row.id]
        return cbz_filename(series, number, title, tag=tag, kind=kind, volume=volume)

    return unique_names(named, name)


def _exportable() -> QuerySet[Chapter]:
    return Chapter.objects.filter(
        dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE, pages__isnull=False
    ).distinct()


def chapters_to_export(manga_ids: Iterable[str] = (), since: datetime | None = None) -> QuerySet[Chapter]:
    """The downloaded chapters of the library, or of the series of `manga_ids`, by series; the export writes
    those its series shows and removes the files of the others."""
    chapters = _exportable()
    ids = list(manga_ids)
    if ids:
        chapters = chapters.filter(manga__series_id__in=Manga.objects.filter(pk__in=ids).values("series_id"))
    if since is not None:
        chapters = chapters.filter(updated_at__gte=since)
    return (
        chapters.select_related("manga__series", "source")
        .prefetch_related("manga__tags")
        .order_by("manga__series__title", "manga__series_id", *READING_ORDER)
    )


def stamp_of(chapter_updated_at: datetime, manga_updated_at: datetime) -> int:
    """The mtime an exported chapter's file carries: its chapter's or manga's last change, whichever is newer."""
    return int(max(chapter_updated_at, manga_updated_at).timestamp())


def is_current(path: Path, stamp: int) -> bool:
    try:
        return int(path.stat().st_mtime) == stamp
    except FileNotFoundError:
        return False


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_cbz(path: Path, chapter: Chapter, *, umask: int, series: SeriesFacts, stamp: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".cbz.part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chapter_zip(chapter, series):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes 0600 files; the library is read by a media server under another user.
        os.chmod(temp, 0o666 & ~umask)
        os.utime(temp, (stamp, stamp))
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
        self.owners = {relative: chapter for chapter, relative in self.places.items()}

    def place(self, chapter_id: str, relative: str) -> None:
        """`chapter_id`'s file is now at `relative`: whichever chapter was written there before no longer is."""
        previous = self.owners.get(relative)
        if previous is not None and previous != chapter_id:
            self.places.pop(previous, None)
        self.owners.pop(self.places.get(chapter_id, ""), None)
        self.places[chapter_id] = relative
        self.owners[relative] = chapter_id

    def forget(self, chapter_id: str) -> str | None:
        relative = self.places.pop(chapter_id, None)
        if relative is not None:
            self.owners.pop(relative, None)
        return relative

    def save(self) -> None:
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".json.part")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(self.places, out, ensure_ascii=False, sort_keys=True)
        os.chmod(temp, 0o666 & ~self.umask)
        os.replace(temp, self.path)


def move_if_renamed(root: Path, manifest: Manifest, chapter_id: str, relative: str) -> bool:
    """Move the chapter's file from where the manifest last saw it; True when it moved."""
    previous = manifest.places.get(chapter_id)
    manifest.place(chapter_id, relative)
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


@dataclass(frozen=True)
class SeriesPlan:
    """One series' part of the export: where its shown chapters go and what their ComicInfo says."""

    files: dict[Any, str]  # shown chapter id -> path under the root
    facts: SeriesFacts
    updated_at: datetime  # the lead's or the series' last change (a merge, a source order): in every file


def plan_series(layout: Layout, chapter: Chapter) -> SeriesPlan:
    """The plan of `chapter`'s series: a series of one manga as before series (no query beyond its file names),
    a merged one from the union of its copies' chapters (five queries)."""
    series = str(chapter.manga.series_id)
    folder = layout.folders[series]
    if series not in layout.merged:
        manga = chapter.manga
        files = chapter_files(Chapter.objects.filter(manga_id=manga.pk), folder)
        facts = SeriesFacts.of(manga, [t.name for t in manga.tags.all()])
        updated = max(manga.updated_at, manga.series.updated_at)
        return SeriesPlan({i: f"{folder}/{name}" for i, name in files.items()}, facts, updated)
    lead = Manga.objects.get(pk=layout.leads[series])
    shown = [entry.shown.pk for entry in chapter_union(series)]
    files = chapter_files(Chapter.objects.filter(pk__in=shown), folder)
    facts = SeriesFacts.of(lead, series_tags([series]).get(series, []))
    updated = max(lead.updated_at, chapter.manga.series.updated_at)
    return SeriesPlan({i: f"{folder}/{name}" for i, name in files.items()}, facts, updated)


def _planned(chapters: QuerySet[Chapter]) -> Iterator[tuple[Chapter, SeriesPlan]]:
    layout = library_layout()
    current: tuple[Any, SeriesPlan] | None = None
    for chapter in chapters.iterator(chunk_size=200):
        if current is None or chapter.manga.series_id != current[0]:
            current = (chapter.manga.series_id, plan_series(layout, chapter))
        yield chapter, current[1]


def remove_file(root: Path, manifest: Manifest, chapter_id: str, keep: Collection[str]) -> bool:
    """Delete the file the manifest says `chapter_id` was written to (a copy its series no longer shows, or a
    shown copy's old place); True when one went. A file at a name in `keep` (one a shown copy takes over) is
    left for that copy to replace, never deleted first."""
    relative = manifest.places.get(chapter_id)
    if relative is None or relative in keep:
        return False
    manifest.forget(chapter_id)
    path = root / relative
    if not path.is_file():
        return False
    path.unlink()
    try:
        path.parent.rmdir()  # only when the folder is now empty
    except OSError:
        pass
    return True


def export_library(
    root: Path, chapters: QuerySet[Chapter], on_chapter: Callable[[Chapter, bool], None] | None = None
) -> ExportStats:
    """Write every shown chapter of `chapters` under `root`, skipping those already current, and remove the files of
    the copies their series no longer shows; `on_chapter(chapter, written)` after each."""
    stats = ExportStats()
    umask = current_umask()
    manifest = Manifest(root, umask)
    try:
        for done, (chapter, plan) in enumerate(_planned(chapters), start=1):
            key = str(chapter.id)
            relative = plan.files.get(chapter.id)
            written = False
            if relative is None:
                stats.removed += remove_file(root, manifest, key, plan.files.values())
            else:
                path = root / relative
                # Another copy's file under this key's name (the shown copy changed): replaced, whatever its mtime.
                taken = manifest.owners.get(relative) not in (None, key)
                if taken:
                    stats.removed += remove_file(root, manifest, key, (relative,))
                    manifest.place(key, relative)
                else:
                    stats.moved += move_if_renamed(root, manifest, key, relative)
                stamp = max(stamp_of(chapter.updated_at, chapter.manga.updated_at), int(plan.updated_at.timestamp()))
                written = taken or not is_current(path, stamp)
                if written:
                    write_cbz(path, chapter, umask=umask, series=plan.facts, stamp=stamp)
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
