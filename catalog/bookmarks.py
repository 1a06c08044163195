"""Bookmarks and the bookmark hook.

Creating a bookmark says "I want to read this": the hook asks for content
downloads of the manga's chapters that are not stored yet — from the
bookmarked chapter onward for a chapter bookmark — in reading order
(catalog.chapter_order: main chapters by volume and number, then extras), so
chapter 1 leaves the queue before chapter 2, in the same order a whole
chapter-list sync queues them, so a reader can start at once. The catalog only says so
(`catalog.signals.bookmark_created`); the crawler, which owns the queue,
listens and enqueues.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from catalog.chapter_order import READING_ORDER, before
from catalog.models import Bookmark, Chapter, Manga
from catalog.signals import bookmark_created


def not_downloaded(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    """The live (not dropped) chapters among `chapters` whose content is not stored, in reading order."""
    return (
        chapters.filter(dropped_at__isnull=True)
        .exclude(sync_state=Chapter.SyncState.DONE)
        .order_by("manga_id", *READING_ORDER)
    )


def chapters_to_fetch(manga: Manga, from_chapter: Chapter | None = None) -> list[Chapter]:
    """Not-yet-downloaded chapters of `manga` (from `from_chapter` on, in reading order)."""
    chapters = Chapter.objects.filter(manga=manga)
    if from_chapter is not None:
        # Onward in reading order, not by number: a bookmark on chapter 5 wants the extras after the story
        # too, and one on side story 2 no main chapter 2 and up.
        chapters = chapters.exclude(before(from_chapter))
    return list(not_downloaded(chapters))


def create_bookmark(*, user: Any, manga: Manga, chapter: Chapter | None = None) -> Bookmark:
    """Create the bookmark and run the hook in one transaction (no bookmark without its downloads)."""
    with transaction.atomic():
        bookmark = Bookmark.objects.create(user=user, manga=manga, chapter=chapter)
        bookmark_created.send(Bookmark, bookmark=bookmark, chapters=chapters_to_fetch(manga, chapter))
    return bookmark
