"""Bookmarks and the bookmark hook, by series.

Creating a bookmark says "I want to read this": the hook asks for content
downloads of the chapters that are not stored yet — from the bookmarked
chapter onward for a chapter bookmark — in reading order
(catalog.chapter_order: main chapters by volume and number, then extras), so
chapter 1 leaves the queue before chapter 2, in the same order a whole
chapter-list sync queues them, so a reader can start at once. The catalog only says so
(`catalog.signals.bookmark_created`); the crawler, which owns the queue,
listens and enqueues (once per chapter key, from the source its series
prefers: crawler.series_downloads).

A whole-manga bookmark is a bookmark of the series (catalog.series_leads):
made on any of its mangas, it is stored on the series' lead, and a user who
has one on any manga of the series has the series bookmarked. Bookmarks are
read by series rather than moved at a merge: a merge can be undone, and a
bookmark moved onto the other copy's lead would not come back with it; two
bookmarks of one user on two copies that a merge brought together are one
bookmarked series, and removing the series' bookmark removes both.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from catalog.chapter_order import READING_ORDER, before
from catalog.models import Bookmark, Chapter, Manga
from catalog.series_leads import lead_of
from catalog.signals import bookmark_created


def series_bookmarks(user: Any, manga: Manga) -> QuerySet[Bookmark]:
    """`user`'s whole-manga bookmarks on any manga of `manga`'s series (one, or one per copy after a merge)."""
    return Bookmark.objects.filter(user=user, manga__series_id=manga.series_id, chapter__isnull=True)


def not_downloaded(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    """The live (not dropped) chapters among `chapters` whose content is not stored, in reading order."""
    return (
        chapters.filter(dropped_at__isnull=True)
        .exclude(sync_state=Chapter.SyncState.DONE)
        .order_by("manga_id", *READING_ORDER)
    )


def chapters_to_fetch(manga: Manga, from_chapter: Chapter | None = None) -> list[Chapter]:
    """Not-yet-downloaded chapters of `manga`'s series, every source's copy (from `from_chapter` on, in reading
    order): the download queue keeps one copy per chapter key."""
    chapters = Chapter.objects.filter(manga__series_id=manga.series_id)
    if from_chapter is not None:
        # Onward in reading order, not by number: a bookmark on chapter 5 wants the extras after the story
        # too, and one on side story 2 no main chapter 2 and up. Another source's copy of the bookmarked
        # chapter itself is wanted whenever it arrived.
        same_key = Q(kind=from_chapter.kind, volume=from_chapter.volume, number=from_chapter.number)
        chapters = chapters.exclude(before(from_chapter) & ~same_key)
    return list(not_downloaded(chapters))


def create_bookmark(*, user: Any, manga: Manga, chapter: Chapter | None = None) -> Bookmark:
    """Create the bookmark and run the hook in one transaction (no bookmark without its downloads).

    A whole-manga bookmark goes on the series' lead; when the series is bookmarked already (on any of its
    mangas), that bookmark is returned and nothing is queued again.
    """
    with transaction.atomic():
        if chapter is None:
            existing = series_bookmarks(user, manga).order_by("created_at").first()
            if existing is not None:
                return existing
            manga = lead_of(manga)
        bookmark = Bookmark.objects.create(user=user, manga=manga, chapter=chapter)
        bookmark_created.send(Bookmark, bookmark=bookmark, chapters=chapters_to_fetch(manga, chapter))
    return bookmark
