"""The stand-in Suwayomi's catalog: three sources of two installed extensions, one extension not installed.

Values follow the conventions the real server passes through from Mihon's
source API (`eu.kanade.tachiyomi.source.model` in mihonapp/mihon
`source-api`): `SChapter.chapter_number` is a Float defaulting to -1f (the
extension could not number it) and may be fractional, `date_upload` is
milliseconds since the epoch with 0 for "no date", `scanlator` is optional,
`SManga.genre` a comma list Suwayomi splits into `genre: [String!]!`, and
`status` one of Suwayomi's MangaStatus values. Thumbnail and page URLs are
the server's own endpoints (`MangaList.proxyThumbnailUrl` and
`ChapterMutation.fetchChapterPages` in Suwayomi-Server):
`/api/v1/manga/{id}/thumbnail`, `/api/v1/manga/{mangaId}/chapter/{index}/page/{n}`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property

from demo.site.images import render_cover, render_page

PAGES_PER_CHAPTER = 2


@dataclass(frozen=True)
class StandinSource:
    id: str  # a LongString: Mihon source ids are 64-bit
    name: str
    lang: str
    is_nsfw: bool
    supports_latest: bool
    extension: str  # the extension's name

    @property
    def display_name(self) -> str:
        return f"{self.name} ({self.lang.upper()})"


@dataclass(frozen=True)
class StandinExtension:
    pkg_name: str
    name: str
    lang: str
    is_installed: bool


@dataclass(frozen=True)
class StandinChapter:
    id: int
    manga_id: int
    name: str
    chapter_number: float
    source_order: int
    upload_date_ms: int
    scanlator: str | None = None
    expected_kind: str = "chapter"
    expected_number: str = ""  # what the crawl must store as the number ("" : chapter_number)

    @cached_property
    def pages(self) -> tuple[bytes, ...]:
        return tuple(
            render_page(f"manga {self.manga_id}", self.name, i, "png") for i in range(1, PAGES_PER_CHAPTER + 1)
        )


@dataclass(frozen=True)
class StandinManga:
    id: int
    source_id: str
    title: str
    author: str
    genre: tuple[str, ...]
    status: str
    chapters: tuple[StandinChapter, ...] = field(default_factory=tuple)  # newest first, as sources list them

    @property
    def url(self) -> str:
        return f"/title/{self.id}"

    @property
    def description(self) -> str:
        return f"The story of {self.title}."

    @cached_property
    def cover(self) -> bytes:
        return render_cover(self.title, "png")


HARBOR = StandinSource("1998944621602463790", "Harbor Scans", "en", False, True, "Harbor Scans")
HAFEN = StandinSource("4637971935551651734", "Harbor Scans", "de", False, True, "Harbor Scans")
NIGHT = StandinSource("7432315126094510284", "Night Shelf", "en", True, False, "Night Shelf")
SOURCES = (HARBOR, HAFEN, NIGHT)
EXTENSIONS = (
    StandinExtension("eu.kanade.tachiyomi.extension.all.harborscans", "Harbor Scans", "all", True),
    StandinExtension("eu.kanade.tachiyomi.extension.en.nightshelf", "Night Shelf", "en", True),
    StandinExtension("eu.kanade.tachiyomi.extension.en.comicwharf", "Comic Wharf", "en", False),
)
_TITLES = ("Crimson Tide", "Silver Wolf", "Quiet Harbor", "Iron Garden", "Paper Moon", "Salt Road", "Glass Key")
# Values both recorded schemas have (r1353's MangaStatus has no UNKNOWN); LICENSED maps to our "unknown".
_STATUSES = ("ONGOING", "COMPLETED", "ON_HIATUS", "PUBLISHING_FINISHED", "CANCELLED", "LICENSED", "ONGOING")


def _ms(moment: dt.datetime) -> int:
    return int(moment.timestamp() * 1000)


def _chapters(manga_id: int, index: int, start: dt.datetime) -> tuple[StandinChapter, ...]:
    """Two or three chapters, oldest first here (reversed on return): the cases the mapping must read."""
    base = manga_id * 100
    day = dt.timedelta(days=1)
    specs: list[tuple[str, float, int, str | None, str, str]] = [
        ("Chapter 1", 1.0, _ms(start), "Tide Team", "chapter", "1"),
        ("Chapter 2: The Gate", 2.0, _ms(start + day), "Tide Team", "chapter", "2"),
    ]
    if index == 0:  # a fractional chapter and an unnumbered notice the extension gave -1
        specs += [("Chapter 2.5", 2.5, _ms(start + 2 * day), None, "chapter", "2.5")]
        specs += [("Notice: Hiatus", -1.0, 0, None, "extra", "0.01")]
    if index == 1:  # a -1 the name still numbers
        specs += [("Vol.1 Ch.3 - Home", -1.0, _ms(start + 3 * day), "Wolf Pack", "chapter", "3")]
    chapters = [
        StandinChapter(base + n, manga_id, name, number, n, date, scanlator, kind, expected)
        for n, (name, number, date, scanlator, kind, expected) in enumerate(specs, start=1)
    ]
    return tuple(reversed(chapters))


def build_mangas(now: dt.datetime) -> tuple[StandinManga, ...]:
    """Harbor Scans (en)'s seven mangas, newest update first, and one manga of Night Shelf."""
    mangas = [
        StandinManga(
            id=index + 1,
            source_id=HARBOR.id,
            title=title,
            author=f"Author {index + 1}, Artist {index + 1}",
            genre=("Action", "Drama") if index % 2 else ("Romance",),
            status=_STATUSES[index],
            chapters=_chapters(index + 1, index, now - dt.timedelta(days=30 - index)),
        )
        for index, title in enumerate(_TITLES)
    ]
    mangas.append(
        StandinManga(50, NIGHT.id, "Moonlit Shelf", "Nocturne", ("Mature",), "ONGOING", _chapters(50, 9, now))
    )
    return tuple(mangas)
