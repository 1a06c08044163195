"""Download each chapter of a series once, from its best source, and from the next source when that one fails.

A series groups several sources' copies of one manga (catalog.series); each
lists the same chapters. Downloading every copy would store each chapter
once per source, so for each chapter key (catalog.chapter_keys) only one copy
is wanted: the first in the series' source order (catalog.series.source_order)
that is still listed and has not failed for good. A key with a downloaded
copy wants nothing more. When the wanted copy fails for good (a permanent
error: its pages are gone or refused; or its last attempt), the next copy in
the order is queued: that is the failover.

An operator may ask a series to keep alternates too (`Series.download_alternates`):
then every source's copy of each chapter key is wanted, each still downloaded
once (a downloaded, failed or dropped copy is never queued again). Turning it
off deletes nothing: the copies stored stay, the next ones follow the rule above.

`choose` and `wanted` are the pure decisions; the rest reads the rows it needs.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Count

from catalog.chapter_keys import ChapterKey
from catalog.models import Chapter, Manga, MangaSource, Series
from catalog.series import source_order
from catalog.series_chapters import key_of
from jobs import errors as engine

logger = logging.getLogger(__name__)

_DONE, _FAILED = Chapter.SyncState.DONE, Chapter.SyncState.FAILED


@dataclass(frozen=True)
class Copy:
    chapter_id: uuid.UUID
    key: ChapterKey
    source_id: str
    sync_state: str
    dropped: bool


def choose(copies: Iterable[Copy], order: Sequence[str]) -> dict[ChapterKey, uuid.UUID | None]:
    """For each chapter key, the copy to download (None: one is downloaded already, or every copy failed)."""
    rank = {source: index for index, source in enumerate(order)}
    by_key: dict[ChapterKey, list[Copy]] = {}
    for copy in copies:
        by_key.setdefault(copy.key, []).append(copy)
    chosen: dict[ChapterKey, uuid.UUID | None] = {}
    for key, found in by_key.items():
        if any(c.sync_state == _DONE for c in found):
            chosen[key] = None
            continue
        usable = sorted(
            (c for c in found if not c.dropped and c.sync_state != _FAILED),
            key=lambda c: (rank.get(c.source_id, len(rank)), str(c.chapter_id)),
        )
        chosen[key] = usable[0].chapter_id if usable else None
    return chosen


def wanted(copies: Iterable[Copy], order: Sequence[str], *, alternates: bool = False) -> set[uuid.UUID]:
    """The copies to download: `choose`'s one per key, or with `alternates` every copy still to download."""
    if alternates:
        return {c.chapter_id for c in copies if not c.dropped and c.sync_state not in (_DONE, _FAILED)}
    return {chapter_id for chapter_id in choose(copies, order).values() if chapter_id is not None}


def _shared_series(manga_ids: set[uuid.UUID]) -> set[uuid.UUID]:
    """The series among these mangas' that hold more than one manga (most hold one: nothing to choose)."""
    series = Manga.objects.filter(pk__in=manga_ids).values_list("series_id", flat=True)
    return set(
        Series.objects.filter(pk__in=series).annotate(n=Count("mangas")).filter(n__gt=1).values_list("pk", flat=True)
    )


def _chosen_in(series_ids: set[uuid.UUID], retry: frozenset[uuid.UUID] = frozenset()) -> set[uuid.UUID]:
    """Every chapter chosen for download in these series; the failed copies in `retry` compete as if new."""
    chosen: set[uuid.UUID] = set()
    for series in Series.objects.filter(pk__in=series_ids):
        chapters = list(
            Chapter.objects.filter(manga__series=series).only(
                "id", "source_id", "kind", "volume", "number", "title", "sync_state", "dropped_at"
            )
        )
        sources = MangaSource.objects.filter(manga__series=series).values_list("source_id", flat=True)
        order = source_order(series.source_order, sources)
        copies = [
            Copy(c.id, key_of(c), c.source_id, "new" if c.id in retry else c.sync_state, c.dropped_at is not None)
            for c in chapters
        ]
        chosen |= wanted(copies, order, alternates=series.download_alternates)
    return chosen


def only_wanted(chapters: Sequence[Chapter]) -> list[Chapter]:
    """`chapters` without the copies another source of their series downloads instead (two queries when alone)."""
    shared = _shared_series({c.manga_id for c in chapters})
    if not shared:
        return list(chapters)
    series_of = dict(Manga.objects.filter(series__in=shared).values_list("pk", "series_id"))
    # A failed copy asked for again (an operator's requeue, a repair of lost pages) is tried again, as a chapter of a
    # one-source manga is: first in its series' order it is downloaded from its own source, else it waits.
    retry = frozenset(c.id for c in chapters if c.sync_state == _FAILED)
    chosen = _chosen_in(shared, retry)
    return [c for c in chapters if c.manga_id not in series_of or c.id in chosen]


def replacements(chapters: Sequence[Chapter]) -> list[Chapter]:
    """The copies to download now that `chapters` cannot be (failed for good, or dropped by their source)."""
    shared = _shared_series({c.manga_id for c in chapters})
    if not shared:
        return []
    series_of = dict(Manga.objects.filter(series__in=shared).values_list("pk", "series_id"))
    lost = {(series_of[c.manga_id], key_of(c)) for c in chapters if c.manga_id in series_of}
    chosen = Chapter.objects.filter(pk__in=_chosen_in(shared), kind__in={c.kind for c in chapters})
    return [c for c in chosen if (series_of[c.manga_id], key_of(c)) in lost]


def next_copy(chapter: Chapter) -> Chapter | None:
    """The copy to download now that `chapter` failed for good (it is `failed` already), or None."""
    found = replacements([chapter])
    return found[0] if found else None


def fails_for_good(error: BaseException, attempts: int, max_attempts: int) -> bool:
    """Whether a download's failure ends its job: a permanent error, or any failure on the last attempt.

    A paused, busy, cooling or cancelled download is given back and runs again, so it is never for good.
    """
    if isinstance(error, (engine.JobCancelled, engine.Paused, engine.Busy, engine.Held, engine.RetryLater)):
        return False
    return isinstance(error, engine.PermanentError) or attempts >= max_attempts
