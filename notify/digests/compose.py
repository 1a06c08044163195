"""What one user's digest says: pure decisions over the chapters of one pass, tested directly.

A chapter is *news* when the source listed it after the user bookmarked the series and after the series' first
crawl had settled (NOTIFY_BACKLOG_WINDOW after the manga row was made). Everything else is *backlog*: the chapters a
series already had when it was first crawled or bookmarked, which arrive by the hundred as their downloads finish.
News is listed chapter by chapter with a link to read it; a series' backlog in a pass is one line, "N chapters of X
are ready", however many chapters that is, so adding a source or bookmarking a long series never floods anyone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from notify.markdown import escape, link

# A digest lists at most this many chapters of one series; the rest is counted ("and 12 more").
CHAPTERS_LISTED_PER_SERIES = 20


@dataclass(frozen=True)
class ReadyItem:
    """A chapter of a bookmarked series that became readable in this pass, with what the decision needs."""

    manga_id: uuid.UUID
    manga_title: str
    manga_created_at: datetime
    chapter_id: uuid.UUID
    chapter_label: str
    chapter_listed_at: datetime
    # Reading order within the series (catalog.chapter_order), so a digest lists chapter 11 before 12.
    order: tuple
    bookmarked_at: datetime


@dataclass(frozen=True)
class SeriesLines:
    manga_id: uuid.UUID
    title: str
    news: tuple[ReadyItem, ...]
    backlog: int


@dataclass(frozen=True)
class Digest:
    title: str
    body: str
    chapters: int


def is_news(item: ReadyItem, backlog_window: timedelta) -> bool:
    """Listed after the bookmark and after the series' first crawl settled: a new chapter, not backlog."""
    return item.chapter_listed_at >= item.bookmarked_at and item.chapter_listed_at >= (
        item.manga_created_at + backlog_window
    )


def group(items: Iterable[ReadyItem], backlog_window: timedelta) -> list[SeriesLines]:
    """Per series (by title, then id): its news in reading order and how many backlog chapters came with it."""
    by_series: dict[uuid.UUID, list[ReadyItem]] = {}
    for item in items:
        by_series.setdefault(item.manga_id, []).append(item)
    series = []
    for manga_id, chapters in by_series.items():
        news = tuple(sorted((c for c in chapters if is_news(c, backlog_window)), key=lambda c: c.order))
        series.append(SeriesLines(manga_id, chapters[0].manga_title, news, len(chapters) - len(news)))
    return sorted(series, key=lambda s: (s.title.casefold(), str(s.manga_id)))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def compose(
    items: Sequence[ReadyItem],
    *,
    backlog_window: timedelta,
    chapter_url: Callable[[uuid.UUID], str],
    series_url: Callable[[uuid.UUID], str],
) -> Digest | None:
    """The Markdown digest of `items` (one user's chapters of one pass); None when there is nothing to say."""
    series = group(items, backlog_window)
    if not series:
        return None
    lines: list[str] = []
    for entry in series:
        if entry.news:
            lines.append(f"**{escape(entry.title)}**")
            for item in entry.news[:CHAPTERS_LISTED_PER_SERIES]:
                lines.append(f"- {link(item.chapter_label, chapter_url(item.chapter_id))}")
            hidden = len(entry.news) - CHAPTERS_LISTED_PER_SERIES
            if hidden > 0:
                lines.append(f"- and {hidden} more: {link(entry.title, series_url(entry.manga_id))}")
            if entry.backlog:
                lines.append(f"- and {plural(entry.backlog, 'earlier chapter')} ready")
            lines.append("")
        else:
            ready = f"{plural(entry.backlog, 'chapter')} of {link(entry.title, series_url(entry.manga_id))} "
            lines.append(ready + ("is ready" if entry.backlog == 1 else "are ready"))
            lines.append("")
    total = len(items)
    return Digest(title=f"{plural(total, 'chapter')} ready to read", body="\n".join(lines).strip(), chapters=total)
