"""Reading counts of a series grouping several sources: each chapter key counted once, read in any copy.

A card's counts (readable chapters, those the reader finished, unread) come
from SQL per manga for a series of one manga, most of a library
(reader.shelves). A series with several sources lists each chapter key once
(catalog.series_books), so counting its lead's own chapters would miss the
chapters another source downloaded, and counting every copy would count a
chapter twice. Those entries, a few on a page, are counted here from one
query over all of their copies: a key is readable when one copy is
downloaded, and read when it is readable and the reader finished one of
its copies (progress is shared between copies, and a copy read before the
merge still counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import BooleanField, Exists, F, OuterRef, Value

from catalog.models import Chapter
from catalog.series_chapters import key_of
from catalog.series_leads import merged_series
from reader.models import ReadProgress


@dataclass(frozen=True)
class Copy:
    """One source's copy of a chapter, as counting needs it."""

    series_id: str
    source_id: str
    kind: str
    volume: int | None
    number: Decimal
    title: str
    readable: bool
    done: bool


@dataclass(frozen=True)
class Counts:
    chapter_count: int
    read_count: int

    @property
    def unread_count(self) -> int:
        return self.chapter_count - self.read_count


NONE = Counts(0, 0)


def count_keys(copies: Iterable[Copy]) -> dict[str, Counts]:
    """Per series: chapter keys with a downloaded copy, and those of them finished in some copy."""
    readable: dict[str, set[Any]] = {}
    done: dict[str, set[Any]] = {}
    for copy in copies:
        key = key_of(copy)
        readable.setdefault(copy.series_id, set())
        done.setdefault(copy.series_id, set())
        if copy.readable:
            readable[copy.series_id].add(key)
        if copy.done:
            done[copy.series_id].add(key)
    return {series: Counts(len(keys), len(keys & done[series])) for series, keys in readable.items()}


def series_counts(series_ids: Iterable[Any], user: Any) -> dict[str, Counts]:
    """`count_keys` over the live chapters of `series_ids` (one query; none for no series)."""
    ids = list({str(s) for s in series_ids})
    if not ids:
        return {}
    rows = Chapter.objects.filter(manga__series_id__in=ids, dropped_at__isnull=True)
    if getattr(user, "is_authenticated", False):
        finished = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
        rows = rows.annotate(done=Exists(finished))
    else:
        rows = rows.annotate(done=Value(False, output_field=BooleanField()))
    values = rows.annotate(series=F("manga__series_id")).values_list(
        "series", "source_id", "kind", "volume", "number", "title", "sync_state", "done"
    )
    copies = (
        Copy(str(series), source, kind, volume, number, title, state == Chapter.SyncState.DONE, done)
        for series, source, kind, volume, number, title, state, done in values
    )
    return count_keys(copies)


def set_series_counts(mangas: Sequence[Any], user: Any) -> None:
    """Give the leads of `mangas` whose series group several mangas their series' counts (two queries at most).

    Each manga needs `series_id`; the others keep the counts SQL gave them.
    """
    merged = merged_series({m.series_id for m in mangas})
    if not merged:
        return
    counts = series_counts(merged, user)
    for manga in mangas:
        if str(manga.series_id) in merged:
            found = counts.get(str(manga.series_id), NONE)
            manga.chapter_count, manga.read_count = found.chapter_count, found.read_count
            manga.unread_count = found.unread_count
