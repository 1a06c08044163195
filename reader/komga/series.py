"""A Komga series is a whole series across its sources: one entry per series, its books the union of its copies.

Komga clients (Mihon's extension and tracker first) know a series by the id
they listed. Every series is listed under its lead (catalog.series_leads),
and an id naming a copy merged into another series answers as that series:
the lead's data, under the lead's id. Mihon keeps the URL it stored
(`/api/v1/series/<old id>`) and asks every later call (details, books, the
tracker) through it, so an entry saved before a merge keeps working; the id
in the answer is only shown, never used to build a URL.

Book counts: a series of one manga (most of a library) counts its chapters in
SQL with the page (queries.series_rows); the page's merged entries are
recounted here over the union of their copies' chapters (one chapter per
chapter key, catalog.series_chapters), with one query for all of them, so a
page costs the same number of queries whatever it holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import F, FilteredRelation, Q
from django.http import Http404

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga
from catalog.series import source_order
from catalog.series_books import UNION_COLUMNS
from catalog.series_chapters import union_chapters
from catalog.series_leads import lead_of, merged_series
from reader.models import ReadProgress


def lead(series_id: str) -> Manga:
    """The lead of the series `series_id` names (a lead's id or any copy's); 404 for an unknown or malformed id."""
    try:
        manga = Manga.objects.filter(pk=series_id).first()
    except ValidationError as exc:  # a malformed UUID is as unknown as a missing one
        raise Http404("No such series.") from exc
    if manga is None:
        raise Http404("No such series.")
    return lead_of(manga)


@dataclass(frozen=True)
class Counts:
    books: int
    read: int
    in_progress: int


def is_done(chapter: Any) -> bool:
    return bool(chapter.sync_state == Chapter.SyncState.DONE)


def union_counts(chapters: Iterable[Any], order: list[str]) -> Counts:
    """A series' book counts over its shown chapters: the readable ones, each key once (pure).

    Each chapter carries `done` (its progress row's `completed`, None without
    one) and `page` (its `last_page`). A key's shown copy is the readable one
    of the preferred source when any copy is readable; the copies share
    completion (reader.progress.twins), so its own row says the key's state.
    """
    shown = [e.shown for e in union_chapters(chapters, order, readable=is_done) if is_done(e.shown)]
    read = sum(1 for c in shown if c.done)
    started = sum(1 for c in shown if c.done is False and (c.page or 0) > 0)
    return Counts(len(shown), read, started)


def with_union_counts(user: Any, mangas: list[Manga]) -> list[Manga]:
    """`mangas` (leads annotated by queries.series_rows) with their merged entries' counts over the union.

    One query tells which entries are merged; one more reads all their live
    chapters with `user`'s progress; none when the page has no merged entry.
    """
    merged = merged_series(m.series_id for m in mangas)
    if not merged:
        return mangas
    mine = FilteredRelation("read_progress", condition=Q(read_progress__user_id=user.pk))
    rows = (
        Chapter.objects.filter(manga__series_id__in=merged, dropped_at__isnull=True)
        .annotate(
            mine=mine,
            done=F("mine__completed"),
            page=F("mine__last_page"),
            series=F("manga__series_id"),
            series_order=F("manga__series__source_order"),
        )
        .only(*UNION_COLUMNS)
        .order_by(*READING_ORDER)
    )
    by_series: dict[str, list[Any]] = defaultdict(list)
    for chapter in rows:
        by_series[str(chapter.series)].append(chapter)
    for manga in mangas:
        chapters = by_series.get(str(manga.series_id))
        if chapters is None:
            continue
        order = source_order(chapters[0].series_order or [], {c.source_id for c in chapters})
        counts = union_counts(chapters, order)
        manga.books_count, manga.books_read, manga.books_in_progress = counts.books, counts.read, counts.in_progress
    return mangas


def forget_series(user: Any, series_lead: Manga) -> int:
    """`user`'s progress in every chapter of every copy of the series gone (Komga's "mark series unread")."""
    deleted, _ = ReadProgress.objects.filter(user=user, chapter__manga__series_id=series_lead.series_id).delete()
    return deleted
