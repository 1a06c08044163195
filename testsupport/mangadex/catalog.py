"""What the MangaDex stand-in serves: six mangas in three languages, and what a crawl in English must store.

Modelled on real MangaDex entries: a main title in romanised Japanese with
the English one among `altTitles` (as most mangas there), authors and
artists as separate relationships (one person as both), tags with localized
names, a cover_art relationship, chapters per translated language, a
oneshot (chapter null), a chapter hosted elsewhere (`externalUrl`, as the
MangaPlus-licensed ones) and one taken down (`isUnavailable`, pages 0).
One manga has no English chapter, so an English source never lists it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from dataclasses import dataclass, field
from functools import cached_property

from demo.site.images import render_cover, render_page

NAMESPACE = uuid.UUID("5b0c1d58-55c1-4c43-9d5c-6a1f0c7a2e11")
EPOCH = dt.datetime(2026, 11, 1, 12, tzinfo=dt.UTC)


def uid(*parts: object) -> str:
    return str(uuid.uuid5(NAMESPACE, "/".join(str(p) for p in parts)))


@dataclass(frozen=True)
class StandInChapter:
    manga: str  # the manga's slug
    number: str | None  # MangaDex's `chapter` string (None: a oneshot)
    language: str
    pages: int = 2
    volume: str | None = None
    title: str = ""
    external_url: str | None = None
    unavailable: bool = False
    hours_ago: int = 100

    @property
    def id(self) -> str:
        return uid("chapter", self.manga, self.language, self.number)

    @property
    def hash(self) -> str:
        return hashlib.md5(self.id.encode()).hexdigest()  # noqa: S324 - a name, as MangaDex's hash is

    @property
    def readable(self) -> bool:
        return not self.external_url and not self.unavailable and self.pages > 0

    def files(self, saver: bool) -> list[str]:
        """File names as the at-home server lists them: `x{n}-{sha256}.png` (data-saver: `.jpg`)."""
        ext = "jpg" if saver else "png"
        return [
            f"x{n}-{hashlib.sha256(f'{self.id}{n}{saver}'.encode()).hexdigest()}.{ext}"
            for n in range(1, self.pages + 1)
        ]

    def image(self, file_name: str, saver: bool) -> bytes:
        index = self.files(saver).index(file_name)
        return _page(self.manga, self.number or "oneshot", index + 1, "JPEG" if saver else "PNG")

    def published(self) -> dt.datetime:
        return EPOCH - dt.timedelta(hours=self.hours_ago)


@dataclass(frozen=True)
class StandInManga:
    slug: str
    title: dict[str, str]
    alt_titles: tuple[dict[str, str], ...]
    description: dict[str, str]
    status: str
    authors: tuple[str, ...]
    artists: tuple[str, ...]
    tags: tuple[str, ...]
    content_rating: str = "safe"
    chapters: tuple[StandInChapter, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        return uid("manga", self.slug)

    @property
    def cover_file(self) -> str:
        return f"{uid('cover', self.slug)}.jpg"

    @cached_property
    def cover(self) -> bytes:
        return render_cover(self.slug, "JPEG")

    def latest_upload(self) -> dt.datetime:
        return max(c.published() for c in self.chapters if c.published() <= dt.datetime.now(dt.UTC))

    def languages(self) -> set[str]:
        return {c.language for c in self.chapters}


_PAGES: dict[tuple[str, str, int, str], bytes] = {}


def _page(slug: str, number: str, index: int, fmt: str) -> bytes:
    key = (slug, number, index, fmt)
    if key not in _PAGES:
        _PAGES[key] = render_page(slug, number, index, fmt)
    return _PAGES[key]


def _chapters(slug: str, *specs: dict) -> tuple[StandInChapter, ...]:
    return tuple(StandInChapter(manga=slug, **spec) for spec in specs)


CATALOG: tuple[StandInManga, ...] = (
    StandInManga(
        "yoru-no-mon",
        {"ja-ro": "Yoru no Mon"},
        ({"en": "The Night Gate"}, {"ja": "夜の門"}, {"fr": "La Porte de la Nuit"}),
        {"en": "A gate that opens only at night.", "fr": "Une porte qui ne s'ouvre que la nuit."},
        "ongoing",
        ("Aki Mori",),
        ("Aki Mori",),
        ("Action", "Fantasy"),
        chapters=_chapters(
            "yoru-no-mon",
            {"number": "1", "language": "en", "volume": "1", "title": "Dusk", "hours_ago": 30},
            {"number": "2", "language": "en", "volume": "1", "title": "The Gate", "pages": 3, "hours_ago": 2},
            {"number": "1", "language": "fr", "volume": "1", "title": "Crépuscule", "hours_ago": 1},
        ),
    ),
    StandInManga(
        "crimson-tide",
        {"en": "Crimson Tide"},
        ({"ja-ro": "Akai Shio"},),
        {"en": "Red water, red sky."},
        "ongoing",
        ("Ren Kato",),
        ("Yui Sato",),
        ("Drama",),
        content_rating="suggestive",
        chapters=_chapters(
            "crimson-tide",
            {"number": "1", "language": "en", "hours_ago": 90},
            {"number": "2", "language": "en", "hours_ago": 80},
            {
                "number": "3",
                "language": "en",
                "hours_ago": 70,
                "external_url": "https://mangaplus.shueisha.co.jp/viewer/1",
            },
            {"number": "4", "language": "en", "hours_ago": 60},
            {"number": "5", "language": "en", "hours_ago": 50, "unavailable": True, "pages": 0},
            {"number": "5.5", "language": "en", "hours_ago": 45, "title": "Side Story"},
            {"number": "6", "language": "en", "hours_ago": 5},
            # Scheduled by its group for a year from the catalog's date: not readable yet, not listed.
            {"number": "7", "language": "en", "hours_ago": -24 * 365 * 2},
        ),
    ),
    StandInManga(
        "silver-wolf",
        {"ja-ro": "Gin no Okami"},
        ({"en": "Silver Wolf"},),
        {"en": "A wolf in winter."},
        "completed",
        ("Kei Ono",),
        (),
        ("Fantasy",),
        chapters=_chapters("silver-wolf", {"number": "1", "language": "en", "hours_ago": 10}),
    ),
    StandInManga(
        "quiet-harbor",
        {"ja-ro": "Shizuka na Minato"},
        ({"fr": "Le Port Tranquille"},),
        {"fr": "Un port, la nuit."},
        "hiatus",
        ("Mio Abe",),
        (),
        ("Drama",),
        chapters=_chapters("quiet-harbor", {"number": "1", "language": "fr", "hours_ago": 3}),
    ),
    StandInManga(
        "paper-moon",
        {"en": "Paper Moon"},
        (),
        {"en": "A oneshot."},
        "cancelled",
        ("Mio Abe",),
        ("Mio Abe",),
        ("Romance",),
        chapters=_chapters("paper-moon", {"number": None, "language": "en", "title": "Paper Moon", "hours_ago": 20}),
    ),
    StandInManga(
        "iron-garden",
        {"ja-ro": "Tetsu no Niwa"},
        ({"en": "Iron Garden"}, {"pt-br": "Jardim de Ferro"}),
        {"en": "Gears and roses."},
        "hiatus",
        ("Kei Ono",),
        ("Ren Kato",),
        ("Sci-Fi", "Drama"),
        chapters=_chapters(
            "iron-garden",
            {"number": "1", "language": "en", "volume": "1", "hours_ago": 40},
            {"number": "2", "language": "en", "volume": "1", "hours_ago": 35},
            {"number": "1", "language": "pt-br", "hours_ago": 4},
        ),
    ),
)

TAG_IDS = {name: uid("tag", name) for name in {t for m in CATALOG for t in m.tags}}
PEOPLE_IDS = {name: uid("person", name) for name in {p for m in CATALOG for p in (*m.authors, *m.artists)}}


def expected(languages: tuple[str, ...] = ("en",)) -> dict[str, dict]:
    """What a crawl of sources in `languages` must store: per English title, its chapters and pages."""
    out = {}
    for manga in CATALOG:
        chapters = [c for c in manga.chapters if c.language in languages]
        if not chapters:
            continue
        title = next((alt[lang] for lang in languages for alt in (manga.title, *manga.alt_titles) if lang in alt), None)
        title = title or next(iter(manga.title.values()))
        chapters = [c for c in chapters if c.published() <= dt.datetime.now(dt.UTC)]
        readable = [c for c in chapters if c.readable]
        out[title] = {
            "manga": manga,
            "chapters": readable,
            "pages": sum(c.pages for c in readable),
            "external": sum(1 for c in chapters if c.external_url),
            "unavailable": sum(1 for c in chapters if c.unavailable),
        }
    return out


def find_chapter(chapter_id: str) -> StandInChapter | None:
    return next((c for m in CATALOG for c in m.chapters if c.id == chapter_id), None)


def find_manga(manga_id: str) -> StandInManga | None:
    return next((m for m in CATALOG if m.id == manga_id), None)
