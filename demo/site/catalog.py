"""The demo site's generated manga catalog: deterministic from a seed, mutable by tests.

Mangas are kept newest first, the order a real site's "latest updates" list
uses. Adding a chapter or updating a manga bumps it to the front, which is
what lets tests reproduce list drift and early-stop behaviour.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import threading
from dataclasses import dataclass, field
from decimal import Decimal

_ADJECTIVES = (
    "Crimson", "Silent", "Hidden", "Eternal", "Broken", "Golden", "Shadow", "Frozen", "Wandering", "Last",
    "Burning", "Azure", "Iron", "Paper", "Midnight", "Falling", "Lucky", "Distant", "Velvet", "Wild",
)  # fmt: skip
_NOUNS = (
    "Blade", "Garden", "Kingdom", "Moon", "Sword", "Library", "Dragon", "River", "Tower", "Fox",
    "Lantern", "Oath", "Harbor", "Comet", "Forest", "Archive", "Crown", "Festival", "Mirror", "Tide",
)  # fmt: skip
_PLACES = (
    "the North", "Ashfall", "the Old Capital", "Seven Hills", "the Glass Sea", "Kestrel Bay",
    "the Last Station", "Cinder Street", "the Floating City", "Lowmarsh",
)  # fmt: skip
_AUTHORS = (
    "Aiko Tanabe", "Ren Kisaragi", "Mina Haruno", "Sora Ikeda", "Kenji Morita", "Yui Natsume",
    "Daichi Arai", "Hana Okabe", "Takumi Sato", "Rika Fujimoto",
)  # fmt: skip
_TAGS = (
    "action", "adventure", "comedy", "drama", "fantasy", "romance", "mystery", "slice of life",
    "sci-fi", "sports", "horror", "historical",
)  # fmt: skip
_STATUSES = ("Ongoing", "Completed", "Hiatus", "Cancelled")
_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
IMAGE_FORMATS = ("png", "jpeg", "webp")
EDITABLE_FIELDS = frozenset({"title", "alt_titles", "description", "authors", "status", "tags"})


@dataclass
class DemoChapter:
    key: str
    number: Decimal
    title: str
    pages: int
    published_at: dt.datetime
    # Rotates the image format so a chapter serves a mix of PNG, JPEG and WebP.
    format_offset: int = 0

    def page_format(self, index: int) -> str:
        return IMAGE_FORMATS[(self.format_offset + index) % len(IMAGE_FORMATS)]


@dataclass
class DemoManga:
    key: str
    title: str
    alt_titles: list[str]
    description: str
    authors: list[str]
    status: str
    tags: list[str]
    cover_format: str
    chapters: list[DemoChapter] = field(default_factory=list)
    next_chapter_seq: int = 1

    def chapter(self, chapter_key: str) -> DemoChapter | None:
        return next((c for c in self.chapters if c.key == chapter_key), None)


class DemoCatalog:
    """Thread-safe catalog. Readers get deep copies so a concurrent mutation never tears a page."""

    def __init__(self, *, mangas: int, chapters: tuple[int, int], pages: tuple[int, int], seed: int) -> None:
        if mangas < 0 or not (1 <= chapters[0] <= chapters[1]) or not (1 <= pages[0] <= pages[1]):
            raise ValueError("demo catalog needs mangas >= 0 and 1 <= min <= max for chapters and pages")
        self._rng = random.Random(seed)
        self._chapters_range = chapters
        self._pages_range = pages
        self._lock = threading.RLock()
        self._next_manga = 1
        self._clock = 0
        self._titles: set[str] = set()
        self._mangas: list[DemoManga] = []  # newest first
        for _ in range(mangas):
            self._mangas.insert(0, self._new_manga(title=None))

    # --- reads -----------------------------------------------------------------------

    def mangas(self) -> list[DemoManga]:
        """Every manga, newest first (a snapshot)."""
        with self._lock:
            return copy.deepcopy(self._mangas)

    def keys(self) -> list[str]:
        with self._lock:
            return [m.key for m in self._mangas]

    def manga(self, key: str) -> DemoManga | None:
        with self._lock:
            found = self._find(key)
            return copy.deepcopy(found) if found else None

    # --- mutations ---------------------------------------------------------------------

    def add_manga(self, title: str | None = None) -> str:
        """Create a manga with a few chapters; it becomes the newest."""
        with self._lock:
            manga = self._new_manga(title=title)
            self._mangas.insert(0, manga)
            return manga.key

    def add_chapter(self, manga_key: str) -> str:
        """Append the next whole-numbered chapter; the manga becomes the newest."""
        with self._lock:
            manga = self._require(manga_key)
            top = max((c.number for c in manga.chapters), default=Decimal(0))
            chapter = self._new_chapter(manga, Decimal(int(top) + 1))
            manga.chapters.append(chapter)
            self._bump(manga)
            return chapter.key

    def remove_chapter(self, manga_key: str, chapter_key: str) -> None:
        with self._lock:
            manga = self._require(manga_key)
            if manga.chapter(chapter_key) is None:
                raise KeyError(f"demo manga {manga_key} has no chapter {chapter_key}")
            manga.chapters = [c for c in manga.chapters if c.key != chapter_key]

    def update_manga(self, manga_key: str, **fields: object) -> None:
        """Change metadata fields (title, alt_titles, description, authors, status, tags); bumps to newest."""
        unknown = set(fields) - EDITABLE_FIELDS
        if unknown:
            raise ValueError(f"cannot update demo manga fields {sorted(unknown)}; editable: {sorted(EDITABLE_FIELDS)}")
        with self._lock:
            manga = self._require(manga_key)
            for name, value in fields.items():
                setattr(manga, name, list(value) if isinstance(value, list | tuple) else value)
            self._bump(manga)

    # --- generation --------------------------------------------------------------------

    def _new_manga(self, *, title: str | None) -> DemoManga:
        rng = self._rng
        number = self._next_manga
        self._next_manga += 1
        title = title or self._unique_title()
        self._titles.add(title)
        manga = DemoManga(
            key=f"manga-{number:04d}",
            title=title,
            alt_titles=[f"{title} ({lang})" for lang in rng.sample(("JP", "KR", "FR"), rng.randint(0, 2))],
            description=(
                f"In {rng.choice(_PLACES)}, a {rng.choice(_ADJECTIVES).lower()} "
                f"{rng.choice(_NOUNS).lower()} changes everything. Demo manga number {number}."
            ),
            authors=rng.sample(_AUTHORS, rng.randint(1, 2)),
            status=rng.choice(_STATUSES),
            tags=sorted(rng.sample(_TAGS, rng.randint(2, 4))),
            cover_format="png" if number % 3 == 0 else "jpeg",
        )
        count = rng.randint(*self._chapters_range)
        numbers = [Decimal(n) for n in range(1, count + 1)]
        # Every fourth manga has an extra half chapter, the way real sites number specials.
        if number % 4 == 0 and count >= 2:
            numbers.insert(2, Decimal("2.5"))
        manga.chapters = [self._new_chapter(manga, n) for n in numbers]
        return manga

    def _new_chapter(self, manga: DemoManga, number: Decimal) -> DemoChapter:
        seq = manga.next_chapter_seq
        manga.next_chapter_seq += 1
        self._clock += 1
        return DemoChapter(
            key=f"{manga.key}-c{seq}",
            number=number,
            title=f"{self._rng.choice(_ADJECTIVES)} {self._rng.choice(_NOUNS)}",
            pages=self._rng.randint(*self._pages_range),
            published_at=_EPOCH + dt.timedelta(hours=self._clock),
            format_offset=seq,
        )

    def _unique_title(self) -> str:
        while True:
            title = f"The {self._rng.choice(_ADJECTIVES)} {self._rng.choice(_NOUNS)}"
            if title not in self._titles:
                return title
            title = f"{title} of {self._rng.choice(_PLACES)}"
            if title not in self._titles:
                return title

    def _find(self, key: str) -> DemoManga | None:
        return next((m for m in self._mangas if m.key == key), None)

    def _require(self, key: str) -> DemoManga:
        manga = self._find(key)
        if manga is None:
            raise KeyError(f"no demo manga {key}")
        return manga

    def _bump(self, manga: DemoManga) -> None:
        self._mangas.remove(manga)
        self._mangas.insert(0, manga)
