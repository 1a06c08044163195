"""The digest's decisions, pure: news or backlog, grouping, the one-line summary, escaping, the cap per series."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from apprise.conversion import markdown_to_html

from notify.digests.compose import CHAPTERS_LISTED_PER_SERIES, ReadyItem, compose, group, is_news
from notify.markdown import escape

pytestmark = pytest.mark.sqlite_ok  # pure: no database

DAY = timedelta(days=1)
T0 = datetime(2026, 1, 10, tzinfo=UTC)
MANGA = uuid.UUID(int=1)


def item(n: int, *, listed: datetime, bookmarked: datetime = T0 - 10 * DAY, created: datetime = T0 - 10 * DAY,
         manga: uuid.UUID = MANGA, title: str = "Blue Lock") -> ReadyItem:  # fmt: skip
    return ReadyItem(
        manga_id=manga,
        manga_title=title,
        manga_created_at=created,
        chapter_id=uuid.UUID(int=1000 + n),
        chapter_label=f"Chapter {n}",
        chapter_listed_at=listed,
        order=("chapter", 0, n),
        bookmarked_at=bookmarked,
    )


def urls():
    return {
        "chapter_url": lambda cid: f"https://m.example/read/{cid}/",
        "series_url": lambda mid: f"https://m.example/mangas/{mid}/",
    }


def test_a_chapter_listed_after_the_bookmark_and_after_the_first_crawl_day_is_news():
    assert is_news(item(1, listed=T0), DAY)


def test_a_chapter_listed_before_the_bookmark_is_backlog():
    assert not is_news(item(1, listed=T0, bookmarked=T0 + timedelta(seconds=1)), DAY)


def test_a_chapter_listed_on_the_series_first_crawl_day_is_backlog():
    assert not is_news(item(1, listed=T0, created=T0 - DAY + timedelta(seconds=1)), DAY)
    assert is_news(item(1, listed=T0, created=T0 - DAY), DAY)


def test_a_first_crawl_backlog_is_one_line_however_many_chapters():
    backlog = [item(n, listed=T0, created=T0 - timedelta(hours=1)) for n in range(1, 2001)]
    digest = compose(backlog, backlog_window=DAY, **urls())
    assert digest is not None
    assert digest.body == f"2000 chapters of [Blue Lock](<https://m.example/mangas/{MANGA}/>) are ready"
    assert digest.title == "2000 chapters ready to read"


def test_news_is_listed_in_reading_order_with_links_and_backlog_counted_beside_it():
    chapters = [item(12, listed=T0), item(11, listed=T0), item(3, listed=T0 - 20 * DAY)]
    digest = compose(chapters, backlog_window=DAY, **urls())
    assert digest is not None
    assert digest.body == (
        "**Blue Lock**\n"
        f"- [Chapter 11](<https://m.example/read/{uuid.UUID(int=1011)}/>)\n"
        f"- [Chapter 12](<https://m.example/read/{uuid.UUID(int=1012)}/>)\n"
        "- and 1 earlier chapter ready"
    )


def test_series_come_by_title_and_a_long_list_is_capped():
    other = uuid.UUID(int=2)
    chapters = [item(n, listed=T0) for n in range(1, CHAPTERS_LISTED_PER_SERIES + 4)]
    chapters.append(item(1, listed=T0, manga=other, title="Akira"))
    series = group(chapters, DAY)
    assert [s.title for s in series] == ["Akira", "Blue Lock"]
    digest = compose(chapters, backlog_window=DAY, **urls())
    assert digest is not None
    assert digest.body.startswith("**Akira**\n")
    assert f"- and 3 more: [Blue Lock](<https://m.example/mangas/{MANGA}/>)" in digest.body
    assert digest.body.count("/read/") == 1 + CHAPTERS_LISTED_PER_SERIES


def test_nothing_ready_is_no_digest():
    assert compose([], backlog_window=DAY, **urls()) is None


def test_a_crawled_title_never_becomes_markup_in_the_html_a_service_renders():
    evil = "<img src=x onerror=alert(1)> **bold** [link](javascript:alert(1)) `code`\n# heading &amp;"
    digest = compose([item(1, listed=T0, title=evil)], backlog_window=DAY, **urls())
    assert digest is not None
    html = markdown_to_html(digest.body)  # what Apprise sends an HTML service (email)
    assert "<img" not in html and "<strong>bold" not in html and "javascript:" not in html.split('href="')[-1][:12]
    assert "<code>" not in html and "<h1>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<a ") == 1  # our own link only


def test_escape_keeps_ordinary_punctuation_readable():
    assert escape("Chapter 4: The End. (Part 2)") == r"Chapter 4: The End. \(Part 2\)"
    assert escape("line\nbreak") == "line break"
