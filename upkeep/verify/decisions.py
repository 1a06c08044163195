"""What the verify pass decides, as pure functions over plain facts (no storage, no database): tested directly.

Gaps are judged per source and manga against what that source *lists*: a
chapter row exists because the source listed it (catalog rows come from the
chapter lists), so a number with no row is one the source never listed (a
site that skips 12, or numbers its specials apart) and is no gap anyone can
fill. A gap is a listed, not-dropped chapter that is not downloaded while
chapters on both sides of it, in reading order (volume, then number, for
each kind apart), are.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import Enum
from typing import Any


@dataclass(frozen=True)
class ChapterFacts:
    id: uuid.UUID
    kind: str
    volume: int | None
    number: Decimal
    listed: bool  # the source still lists it (not dropped)
    stored: bool  # downloaded: sync_state done


def position(chapter: ChapterFacts) -> tuple[Any, ...]:
    """Reading order within a source's list (catalog.chapter_order.reading_key without the tie-breakers)."""
    return (chapter.kind, chapter.volume is None, chapter.volume or 0, chapter.number)


def chapter_gaps(chapters: Iterable[ChapterFacts]) -> list[ChapterFacts]:
    """The listed chapters of one source's manga missing between the first and last stored one, in reading order.

    Each kind (main chapters, extras) is its own sequence. A chapter that is
    both stored and not listed any more still bounds the range: the library
    holds it.
    """
    by_kind: dict[str, list[ChapterFacts]] = {}
    for chapter in chapters:
        by_kind.setdefault(chapter.kind, []).append(chapter)
    gaps: list[ChapterFacts] = []
    for kind in sorted(by_kind):
        ordered = sorted(by_kind[kind], key=position)
        stored = [position(c) for c in ordered if c.stored]
        if len(stored) < 2:
            continue
        low, high = stored[0], stored[-1]
        gaps.extend(c for c in ordered if c.listed and not c.stored and low < position(c) < high)
    return gaps


def held_from_any_source(by_source: dict[str, list[ChapterFacts]]) -> dict[str, list[ChapterFacts]]:
    """Each source's chapters of one manga, a chapter counted stored when any source's copy of it is.

    The library keeps a chapter (kind, volume, number) once, from whichever
    source downloaded it: chapter 12 listed by a second source is no gap when
    the first source's 12 is stored.
    """
    held = {position(c) for chapters in by_source.values() for c in chapters if c.stored}
    return {
        source: [replace(c, stored=True) if not c.stored and position(c) in held else c for c in chapters]
        for source, chapters in by_source.items()
    }


class PageVerdict(Enum):
    OK = "ok"
    MISSING = "missing"
    CORRUPT = "corrupt"


def page_verdict(*, exists: bool, expected_sha256: str, actual_sha256: str | None) -> PageVerdict:
    """`actual_sha256` is None when the bytes were not hashed this pass (a sample): presence alone is judged."""
    if not exists:
        return PageVerdict.MISSING
    if actual_sha256 is not None and actual_sha256.lower() != expected_sha256.lower():
        return PageVerdict.CORRUPT
    return PageVerdict.OK


def sample_rate(sample_pages: int, total_pages: int, *, full: bool) -> float:
    """The share of pages to hash: all with `full`, else about `sample_pages` of `total_pages` (an estimate)."""
    if full:
        return 1.0
    if sample_pages <= 0 or total_pages <= 0:
        return 0.0
    return min(1.0, sample_pages / total_pages)


def orphan_keys(
    listed: Sequence[tuple[str, float]], referenced: set[str], *, now: float, grace_secs: float
) -> list[str]:
    """Keys of `listed` (key, modified epoch seconds) no page names, left alone while younger than `grace_secs`.

    A download stores a batch of files before the INSERT that names them, and
    a temp file lives until its rename: a young unnamed file may be named a
    moment later, so only files older than the grace are orphans.
    """
    return [key for key, modified in listed if key not in referenced and now - modified >= grace_secs]


def export_stale(*, file_mtime: float | None, chapter_stamp: int) -> bool:
    """An exported file is stale when it is gone or older than its chapter's stamp (reader.export.stamp_of)."""
    return file_mtime is None or int(file_mtime) < chapter_stamp
