"""A dry run of a source: one list page, one manga's fields and chapters, the first chapter's pages.

`add_source` prints it and the Sources page shows it, so the operator reads
what a crawl would store before the row is kept. Nothing is stored here;
callers wrap it in a transaction they roll back on failure (the limiter's
token rows included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.models import Source
from crawler.factory import get_source, needs_browser
from sources.base import SourceMangaRef

if TYPE_CHECKING:
    from sources.browser import BrowserManager
    from sources.clearance.records import Clearance

MAX_LISTED = 10


@dataclass(frozen=True)
class ListedChapter:
    number: str
    title: str
    date: str  # ISO date-time, or "no date"
    key: str


@dataclass(frozen=True)
class DryRun:
    list_count: int
    has_next: bool
    mangas: tuple[SourceMangaRef, ...]  # the first MAX_LISTED
    manga_key: str
    fields: tuple[tuple[str, str], ...]  # (label, value or "-") of the first manga
    chapter_count: int
    chapters: tuple[ListedChapter, ...]  # the first MAX_LISTED
    first_chapter: str
    page_count: int
    first_page: str

    def lines(self) -> list[str]:
        """The dry run as `add_source` prints it."""
        out = [f"list page 1: {self.list_count} manga(s){', more pages' if self.has_next else ', last page'}"]
        out += [f"  {m.key:30} {m.title}  <{m.url}>" for m in self.mangas]
        out.append(f"manga {self.manga_key}:")
        out += [f"  {label:12} {value}" for label, value in self.fields]
        out.append(f"  chapters     {self.chapter_count}")
        out += [f"    {c.number:>6}  {c.title[:40]:40} {c.date}  key={c.key}" for c in self.chapters]
        out.append(f"chapter {self.first_chapter}: {self.page_count} page(s), first {self.first_page}")
        return out


def dry_run(row: Source, *, browser: BrowserManager | None = None, clearance: Clearance | None = None) -> DryRun:
    """Fetch what a crawl of `row` would start with; raises CrawlerError naming the key/selector/URL at fault.

    `browser`: the caller's (add_source's, which also passes JavaScript challenges in it), else one made
    here when the source requires it. `clearance`: the probe's pass of the site's challenge, kept as the
    source's so the dry run (and, once the row is kept, the crawl) does not pass it again.
    """
    from crawler.clearance import rows as clearance_store
    from sources.browser import BrowserManager
    from sources.errors import CrawlerError

    owned = browser is None and needs_browser(row)
    if owned:
        browser = BrowserManager()
    if clearance is not None:
        clearance_store.seed(row.id, clearance)
    source = get_source(row, browser=browser)
    try:
        refs, has_next = source.list_page(1)
        if not refs:
            raise CrawlerError(f"source {row.id!r}: list page 1 lists no manga (check list_url and list_anchor)")
        detail = source.manga_detail(refs[0])
        meta = detail.metadata
        fields = (
            ("title", meta.title),
            ("alt titles", " | ".join(meta.alt_titles)),
            ("authors", ", ".join(meta.authors)),
            ("status", meta.status),
            ("tags", ", ".join(meta.tags)),
            ("cover", detail.cover_url),
            ("description", meta.description[:120]),
        )
        chapters = tuple(
            ListedChapter(str(c.number), c.title, c.published_at.isoformat() if c.published_at else "no date", c.key)
            for c in detail.chapters[:MAX_LISTED]
        )
        if not detail.chapters:
            raise CrawlerError(f"source {row.id!r}: {refs[0].url} lists no chapter (check chapter_item)")
        first = detail.chapters[0]
        pages = source.chapter_pages(first)
        return DryRun(
            list_count=len(refs),
            has_next=has_next,
            mangas=tuple(refs[:MAX_LISTED]),
            manga_key=refs[0].key,
            fields=tuple((label, value or "-") for label, value in fields),
            chapter_count=len(detail.chapters),
            chapters=chapters,
            first_chapter=str(first.number),
            page_count=len(pages),
            first_page=pages[0] if pages else "-",
        )
    finally:
        source.close()
        if owned and browser is not None:
            browser.close()
