"""A series page's chapter list, a bounded page at a time: a 2,000-chapter manga costs what a 50-chapter one does.

The list is what a reader shows under a series' lead (catalog.series_books
`shown_chapters`): the lead's own live chapters when the series has one
manga, else each chapter key once across the series' sources. Rows are in
reading order (catalog.chapter_order: main chapters by volume and number,
extras after them, then arrival and id so equal keys never swap between
pages); the page a chapter sits on is counted from that order, so a read
mark sends the reader back to the page it was made on, whichever copy of
the chapter was marked.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from catalog.chapter_order import READING_ORDER, before
from catalog.models import Chapter, Manga, Page
from catalog.series_books import shown_chapters
from catalog.series_leads import is_merged
from reader.library import Paged, paged
from reader.models import ReadProgress
from reader.progress import stored_pages
from reader.series_counts import series_counts

CHAPTERS_PER_PAGE = 100


def live_chapters(manga: Manga | Any) -> QuerySet[Chapter]:
    return Chapter.objects.filter(manga=manga, dropped_at__isnull=True)


def chapter_page(shown: QuerySet[Chapter], page: int, size: int = CHAPTERS_PER_PAGE) -> Paged[Chapter]:
    """Page `page` of `shown` (a lead's `shown_chapters`) in reading order, each with `stored_pages`."""
    return paged(shown.annotate(stored_pages=stored_pages()).order_by(*READING_ORDER), page, size)


def page_of(chapter: Chapter, lead: Manga | None = None, size: int = CHAPTERS_PER_PAGE) -> int:
    """The 1-based page of `lead`'s chapter list (default: the chapter's manga's) that shows `chapter`, or, for
    another source's copy, its chapter key."""
    return shown_chapters(lead or chapter.manga).filter(before(chapter)).count() // size + 1


def chapter_counts(user: Any, lead: Manga) -> dict[str, int]:
    """Over every page: chapters readable (downloaded, with stored pages) and chapters `user` completed (one query
    for a series of one manga; a series of several counts each chapter key once)."""
    if is_merged(lead):
        counts = series_counts([lead.series_id], user).get(str(lead.series_id))
        return {"readable": counts.chapter_count, "read": counts.read_count} if counts else {"readable": 0, "read": 0}
    readable = Q(sync_state=Chapter.SyncState.DONE) & Q(Exists(Page.objects.filter(chapter=OuterRef("pk"))))
    if getattr(user, "is_authenticated", False):
        done = Exists(ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True))
        return live_chapters(lead).aggregate(readable=Count("pk", filter=readable), read=Count("pk", filter=Q(done)))
    return {**live_chapters(lead).aggregate(readable=Count("pk", filter=readable)), "read": 0}
