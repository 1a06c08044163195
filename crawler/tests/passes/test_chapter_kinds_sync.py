"""A site listing side stories, specials, volumes and fractional chapters, read over HTTP and synced to PostgreSQL.

The chapter list is served by a local HTTP server in the markup of a
selector-configured site; the real adapter parses it (sources.parsing
with catalog.chapter_numbers) and the chapter sync stores kind, volume, number
and own name, following the site when it renames a chapter.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from catalog.chapter_order import READING_ORDER
from catalog.models import Chapter, Manga, Source
from crawler.factory import get_source
from crawler.passes.chapters import sync_chapters
from jobs.queue import lease
from sources.base import SourceMangaRef
from sources.config import DEFAULT_NUMBER_PATTERN
from sources.demo import demo_settings
from testsupport.http_server import QuietHandler, serving

pytestmark = pytest.mark.django_db

DETAIL = (
    '<html><body><h1 class="manga-title">Harbour</h1><img class="cover" src="/cover.jpg">'
    '<ul class="chapters">{items}</ul></body></html>'
)
ITEM = '<li class="chapter"><a class="chapter-link" href="/manga/harbour/chapter/{key}">{text}</a></li>'

# Newest first, the way both theme families list chapters.
FIRST_LIST = [
    ("special", "Special"),
    ("ss2", "Side Story 2 - Home"),
    ("ss1", "Side Story 1"),
    ("note", "4"),
    ("c3", "Chapter 3"),
    ("c25", "Chapter 2.5"),
    ("c2", "Vol. 1 Chapter 2"),
    ("c1", "Vol. 1 Chapter 1 - Start"),
]


class ChapterList(QuietHandler):
    listing: list[tuple[str, str]] = FIRST_LIST

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        items = "".join(ITEM.format(key=key, text=text) for key, text in type(self).listing)
        body = DETAIL.format(items=items).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site():
    ChapterList.listing = FIRST_LIST
    with serving(ChapterList) as base_url:
        # The generic number pattern: the classifier, not a site-specific regex, reads the numbers.
        settings = demo_settings(chapter_number_pattern=DEFAULT_NUMBER_PATTERN, chapter_key_pattern=r"/chapter/(\w+)$")
        row = Source.objects.create(id="harbour", name="Harbour", kind="html", base_url=base_url, settings=settings)
        yield row


def _crawl(row: Source, manga: Manga) -> None:
    adapter = get_source(row)
    try:
        detail = adapter.manga_detail(SourceMangaRef("harbour", f"{row.base_url}/manga/harbour", "Harbour"))
    finally:
        adapter.close()
    sync_chapters(manga, row, detail.chapters)


def _stored(manga: Manga) -> list[tuple[str, str, int | None, Decimal, str]]:
    rows = Chapter.objects.filter(manga=manga).order_by(*READING_ORDER)
    return [(c.source_chapter_key, c.kind, c.volume, c.number, c.title) for c in rows]


def test_a_crawl_stores_extras_apart_and_downloads_in_reading_order(site):
    manga = Manga.objects.create(title="Harbour")
    _crawl(site, manga)
    assert _stored(manga) == [
        ("c1", "chapter", 1, Decimal("1"), "Start"),
        ("c2", "chapter", 1, Decimal("2"), ""),
        ("c25", "chapter", None, Decimal("2.5"), ""),
        ("c3", "chapter", None, Decimal("3"), ""),
        ("note", "chapter", None, Decimal("4"), ""),
        ("ss1", "extra", None, Decimal("1"), "Side Story 1"),
        ("ss2", "extra", None, Decimal("2"), "Side Story 2: Home"),
        ("special", "extra", None, Decimal("2.01"), "Special"),
    ]
    by_id = {c.id: c.source_chapter_key for c in Chapter.objects.all()}
    leases = lease(["sync_chapter_content"], 100, timedelta(minutes=1))
    assert [by_id[lz.payload.chapter_id] for lz in leases] == [key for key, *_ in _stored(manga)]


def test_a_later_crawl_follows_renames_and_keeps_an_unnumbered_extras_number(site):
    manga = Manga.objects.create(title="Harbour")
    _crawl(site, manga)
    # The site adds side story 3 and chapter 5, renames the special and turns item "4" into an epilogue.
    ChapterList.listing = [
        ("ss3", "Side Story 3"),
        ("c5", "Chapter 5"),
        *[(key, {"special": "Special - Anniversary", "note": "Epilogue"}.get(key, text)) for key, text in FIRST_LIST],
    ]
    _crawl(site, manga)
    stored = {key: (kind, volume, number, title) for key, kind, volume, number, title in _stored(manga)}
    assert stored["special"] == ("extra", None, Decimal("2.01"), "Special: Anniversary")
    assert stored["ss3"] == ("extra", None, Decimal("3"), "Side Story 3")
    # Oldest first the epilogue comes before every printed extra: 0.01, and the first extra read.
    assert stored["note"] == ("extra", None, Decimal("0.01"), "Epilogue")
    assert [key for key, kind, *_ in _stored(manga) if kind == "extra"] == ["note", "ss1", "ss2", "special", "ss3"]
