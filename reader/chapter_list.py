"""A manga page's chapter list, a bounded page at a time: a 2,000-chapter manga costs what a 50-chapter one does.

Rows are in reading order (catalog.chapter_order: main chapters by volume and
number, extras after them, then arrival and id so equal keys never swap between
pages); the page a chapter sits on is counted from that order, so a read mark
sends the reader back to the page it was made on.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from catalog.chapter_order import READING_ORDER, before
from catalog.models import Chapter, Manga, Page
from reader.library import Paged, paged
from reader.models import ReadProgress
from reader.progress import stored_pages

CHAPTERS_PER_PAGE = 100


def live_chapters(manga: Manga | Any) -> QuerySet[Chapter]:
    return Chapter.objects.filter(manga=manga, dropped_at__isnull=True)


def chapter_page(manga: Manga, page: int, size: int = CHAPTERS_PER_PAGE) -> Paged[Chapter]:
    """Page `page`'s chapters in reading order, each with `stored_pages`."""
    return paged(live_chapters(manga).annotate(stored_pages=stored_pages()).order_by(*READING_ORDER), page, size)


def page_of(chapter: Chapter, size: int = CHAPTERS_PER_PAGE) -> int:
    """The 1-based page of its manga's chapter list that shows `chapter`."""
    return live_chapters(chapter.manga_id).filter(before(chapter)).count() // size + 1


def chapter_counts(user: Any, manga: Manga) -> dict[str, int]:
    """Over every page: chapters readable (downloaded, with stored pages) and chapters `user` completed (one query)."""
    readable = Q(sync_state=Chapter.SyncState.DONE) & Q(Exists(Page.objects.filter(chapter=OuterRef("pk"))))
    if getattr(user, "is_authenticated", False):
        done = Exists(ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True))
        return live_chapters(manga).aggregate(readable=Count("pk", filter=readable), read=Count("pk", filter=Q(done)))
    return {**live_chapters(manga).aggregate(readable=Count("pk", filter=readable)), "read": 0}
