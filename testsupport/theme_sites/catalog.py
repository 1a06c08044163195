"""The catalog both theme fixture sites serve: five mangas, twelve chapters, three pages each.

Chapter slugs repeat across mangas ("chapter-1" under every manga), as on
real sites. The newest chapter of three mangas carries a relative date (the
Madara site prints it as "2 days ago", "an hour ago", "yesterday"); the rest
carry a calendar date printed "November 12, 2026". Image bytes are rendered
once per catalog, so a test compares stored files with what the site serves.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cached_property

from demo.site.images import render_cover, render_page
from testsupport.bad_images import bomb_png, truncated_png

PAGES_PER_CHAPTER = 3
_MANGAS = [
    # slug, title, alt titles, author, status word, our status, tags, chapter count
    ("crimson-tide", "Crimson Tide", ("Akai Shio", "Red Tide"), "Aki Mori", "OnGoing", "ongoing", ("Action", "Sea"), 3),
    ("silver-wolf", "Silver Wolf", ("Gin no Okami",), "Ren Kato", "Completed", "completed", ("Fantasy",), 3),
    ("quiet-harbor", "Quiet Harbor", ("Shizuka na Minato",), "Yui Sato", "On Hold", "hiatus", ("Drama",), 2),
    ("iron-garden", "Iron Garden", ("Tetsu no Niwa",), "Kei Ono", "OnGoing", "ongoing", ("Sci-Fi", "Drama"), 2),
    ("paper-moon", "Paper Moon", ("Kami no Tsuki",), "Mio Abe", "Canceled", "cancelled", ("Romance",), 2),
]  # fmt: skip
# (manga index, chapter number) -> relative phrase and how long ago it is.
_RELATIVE = {
    (0, 3): ("2 days ago", dt.timedelta(days=2)),
    (1, 3): ("an hour ago", dt.timedelta(hours=1)),
    (2, 2): ("yesterday", dt.timedelta(days=1)),
}


@dataclass(frozen=True)
class FixtureChapter:
    manga_slug: str
    manga_title: str
    number: int
    published_at: dt.datetime  # what a crawl should store (relative ones: approximately)
    relative: str | None  # the phrase Madara prints for a new chapter, else None
    label: str = ""  # what the site prints for the chapter when not just "Chapter N"
    name: str = ""  # the chapter's own title within `label`: what a crawl must store
    # One kind per page: "png", "jpeg", "webp", or what a broken site serves: "truncated" (a PNG cut
    # short), "bomb" (a 400-megapixel PNG of 50 KB).
    page_kinds: tuple[str, ...] = ("png",) * PAGES_PER_CHAPTER

    @property
    def slug(self) -> str:
        return f"chapter-{self.number}"

    @property
    def title(self) -> str:
        return self.label or f"Chapter {self.number}"

    def page_extension(self, index: int) -> str:
        """File extension of page `index` (1-based) in its URL."""
        kind = self.page_kinds[index - 1]
        return {"jpeg": "jpg", "webp": "webp"}.get(kind, "png")

    def page_type(self, index: int) -> str:
        return {"jpg": "image/jpeg", "webp": "image/webp"}.get(self.page_extension(index), "image/png")

    @property
    def calendar_date(self) -> str:
        return self.published_at.strftime("%B %d, %Y")

    @cached_property
    def pages(self) -> tuple[bytes, ...]:
        return tuple(_page_bytes(self, i, kind) for i, kind in enumerate(self.page_kinds, start=1))


def _page_bytes(chapter: FixtureChapter, index: int, kind: str) -> bytes:
    if kind == "truncated":
        return truncated_png()
    if kind == "bomb":
        return bomb_png()
    return render_page(chapter.manga_title, str(chapter.number), index, kind)


@dataclass(frozen=True)
class FixtureManga:
    post_id: int
    slug: str
    title: str
    alt_titles: tuple[str, ...]
    author: str
    status_word: str
    status: str
    tags: tuple[str, ...]
    chapters: tuple[FixtureChapter, ...]  # ascending

    @property
    def description(self) -> str:
        return f"The story of {self.title}, told in {len(self.chapters)} chapters."

    @cached_property
    def cover(self) -> bytes:
        return render_cover(self.title, "png")

    @cached_property
    def cover_thumbnail(self) -> bytes:
        # The small srcset candidate: other bytes, so fetching it instead of the largest shows.
        return render_cover(self.title + " (small)", "png")


def build_catalog(now: dt.datetime) -> list[FixtureManga]:
    """The mangas newest first; calendar dates fall on midnight UTC in November 2026."""
    mangas = []
    for index, (slug, title, alts, author, word, status, tags, count) in enumerate(_MANGAS):
        chapters = []
        for number in range(1, count + 1):
            relative = _RELATIVE.get((index, number))
            if relative:
                published = now - relative[1]
            else:
                published = dt.datetime(2026, 11, 1 + index * 5 + number, tzinfo=dt.UTC)
            chapters.append(FixtureChapter(slug, title, number, published, relative[0] if relative else None))
        mangas.append(
            FixtureManga(
                post_id=100 + index * 7,
                slug=slug,
                title=title,
                alt_titles=alts,
                author=author,
                status_word=word,
                status=status,
                tags=tags,
                chapters=tuple(chapters),
            )
        )
    return mangas
