"""What the crawler does when the apps below it say something happened (connected in `CrawlerConfig.ready`)."""

from __future__ import annotations

from typing import Any

from catalog.models import Chapter
from crawler.passes.chapters import enqueue_chapter_content


def enqueue_bookmarked_chapters(sender: Any, *, chapters: list[Chapter], **kwargs: Any) -> None:
    """The bookmark hook: queue the chapters the reader wants, in the order given (ascending).

    `chapters` holds every source's copy of a series' missing chapters; `enqueue_chapter_content` keeps, per
    chapter key, the one copy crawler.series_downloads chooses, so a key is downloaded once.
    """
    enqueue_chapter_content(chapters)
