"""What the crawler does when the apps below it say something happened (connected in `CrawlerConfig.ready`)."""

from __future__ import annotations

from typing import Any

from catalog.models import Chapter, MangaSource, Series
from crawler import download_policy
from crawler.passes.chapters import enqueue_chapter_content


def enqueue_bookmarked_chapters(sender: Any, *, chapters: list[Chapter], **kwargs: Any) -> None:
    """The bookmark hook: queue the chapters the reader wants, in the order given (ascending).

    `chapters` holds every source's copy of a series' missing chapters; `enqueue_chapter_content` keeps, per
    chapter key, the one copy crawler.series_downloads chooses, so a key is downloaded once.
    """
    enqueue_chapter_content(chapters)


def enqueue_series_alternates(sender: Any, *, series: Series, **kwargs: Any) -> int:
    """A series now downloads every source's copy: queue the copies still waiting, as the chapter sync would.

    Each source's copy follows its source's download policy (a `followed` source only for a bookmarked manga);
    crawler.series_downloads decides which copies are wanted. Returns how many jobs were inserted.
    """
    inserted = 0
    for link in MangaSource.objects.filter(manga__series=series).select_related("source", "manga"):
        if not download_policy.wants_pages_of(link.source, link.manga):
            continue
        waiting = Chapter.objects.filter(
            manga=link.manga, source=link.source, dropped_at__isnull=True, sync_state=Chapter.SyncState.NEW
        )
        inserted += enqueue_chapter_content(waiting)
    return inserted
