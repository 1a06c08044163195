"""What the web's series pages add to a manga's: its sources in preference order, and a chapter's other copies.

A series found on several sites is one manga page (its lead's) listing each
chapter key once (catalog.series_books); the page says which sources the
series comes from, preferred first, and on each row which source that
chapter is shown from. The chapter reader offers the other sources' copies
of the chapter it shows ("Also from"), and its previous and next chapters
follow the series' list, so a merged series reads on across sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from catalog.chapter_order import READING_ORDER, before
from catalog.models import Chapter, Manga, MangaSource, Series, Source
from catalog.series import source_order
from catalog.series_books import copies_of, shown_chapters
from catalog.series_chapters import key_of
from reader.models import ReadProgress
from reader.progress import stored_pages

NAV_FIELDS = ("id", "manga_id", "source_id", "kind", "volume", "number", "title", "created_at")


def series_sources(lead: Manga) -> list[MangaSource]:
    """The listings of every manga of `lead`'s series, preferred source first (dropped listings last)."""
    links = list(MangaSource.objects.filter(manga__series_id=lead.series_id).select_related("source"))
    series_order = Series.objects.filter(pk=lead.series_id).values_list("source_order", flat=True).first() or []
    rank = {source: index for index, source in enumerate(source_order(series_order, {s.source_id for s in links}))}
    return sorted(links, key=lambda link: (link.dropped_at is not None, rank[link.source_id], link.created_at))


def readable_shown(lead: Manga, shown: QuerySet[Chapter] | None = None) -> QuerySet[Chapter]:
    """The downloaded chapters shown under `lead`'s series (`shown`, when computed already), in reading order,
    with `stored_pages`."""
    return (
        (shown_chapters(lead) if shown is None else shown)
        .filter(sync_state=Chapter.SyncState.DONE)
        .annotate(stored_pages=stored_pages())
        .order_by(*READING_ORDER)
    )


def resume_point(user: Any, lead: Manga, shown: QuerySet[Chapter] | None = None) -> tuple[Chapter, int] | None:
    """The first downloaded chapter of the series `user` has not finished, and the 1-based page to resume at."""
    done = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
    chapter = readable_shown(lead, shown).exclude(Exists(done)).first()
    if chapter is None:
        return None
    progress = ReadProgress.objects.filter(user=user, chapter=chapter).first()
    resume = progress.last_page if progress and progress.last_page else 1
    return chapter, min(max(resume, 1), max(chapter.stored_pages, 1))


def neighbours(chapter: Chapter, lead: Manga) -> tuple[Chapter | None, Chapter | None]:
    """The downloaded chapters of the series' list just before and just after `chapter`'s key (one query each)."""
    same_key = key_of(chapter)
    readable = shown_chapters(lead).filter(sync_state=Chapter.SyncState.DONE).only(*NAV_FIELDS)
    earlier = [c for c in readable.filter(before(chapter)).order_by(*(f"-{f}" for f in _ORDER_NAMES))[:2]]
    later = [c for c in readable.exclude(before(chapter)).exclude(pk=chapter.pk).order_by(*READING_ORDER)[:2]]
    previous = next((c for c in earlier if key_of(c) != same_key), None)
    following = next((c for c in later if key_of(c) != same_key), None)
    return previous, following


_ORDER_NAMES = ("kind", "volume", "number", "created_at", "id")


@dataclass(frozen=True)
class OtherCopy:
    chapter: Chapter
    source_name: str
    readable: bool


def other_copies(chapter: Chapter) -> list[OtherCopy]:
    """The other sources' copies of `chapter` (preferred first), each readable or not downloaded yet."""
    copies = [c for c in copies_of(chapter) if c.pk != chapter.pk]
    if not copies:
        return []
    names = dict(Source.objects.filter(pk__in={c.source_id for c in copies}).values_list("id", "name"))
    return [OtherCopy(c, names.get(c.source_id, c.source_id), c.sync_state == Chapter.SyncState.DONE) for c in copies]
