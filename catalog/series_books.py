"""A series' chapters as readers show them: one chapter per chapter key across its sources, with the alternates.

Under a series' lead (catalog.series_leads) a reader lists the union of the
chapters of every manga in the series (catalog.series_chapters): each chapter
key once, from the first source in the series' order that has it downloaded,
else the first that lists it; the other copies are alternates a reader can
switch to. A series of one manga (most of a library) is read as before, its
own live chapters, with one indexed count to tell.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga, Series
from catalog.series import source_order
from catalog.series_chapters import SeriesChapter, key_of, union_chapters
from catalog.series_leads import is_merged

UNION_COLUMNS = (
    "manga_id", "source_id", "kind", "volume", "number", "title", "published_at", "sync_state", "page_count",
    "dropped_at", "created_at",
)  # fmt: skip

LIVE = Q(dropped_at__isnull=True)


def chapter_union(series_id: Any, *, live_only: bool = True) -> list[SeriesChapter[Chapter]]:
    """The series' chapters, one entry per chapter key in reading order, each with its alternates (two queries)."""
    series = Series.objects.only("source_order").get(pk=series_id)
    rows = Chapter.objects.filter(manga__series_id=series_id)
    if live_only:
        rows = rows.filter(LIVE)
    chapters = list(rows.only(*UNION_COLUMNS).order_by(*READING_ORDER))
    order = source_order(series.source_order, {c.source_id for c in chapters})
    return union_chapters(chapters, order, readable=lambda c: c.sync_state == Chapter.SyncState.DONE)


def shown_chapters(manga: Manga) -> QuerySet[Chapter]:
    """The live chapters a reader shows under `manga`'s series: its own when alone, else one copy per chapter key."""
    if not is_merged(manga):
        return Chapter.objects.filter(LIVE, manga_id=manga.pk)
    shown = [entry.shown.pk for entry in chapter_union(manga.series_id)]
    return Chapter.objects.filter(LIVE, pk__in=shown)


def copies_of(chapter: Chapter) -> list[Chapter]:
    """Every live copy of `chapter`'s chapter key in its series, preferred first, `chapter` included (two queries)."""
    series_id = Manga.objects.values_list("series_id", flat=True).get(pk=chapter.manga_id)
    key = key_of(chapter)
    for entry in chapter_union(series_id):
        if entry.key == key:
            return [entry.shown, *entry.alternates]
    return [chapter]
