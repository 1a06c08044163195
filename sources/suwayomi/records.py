"""Suwayomi's mangas and chapters as the Source protocol's records (pure functions, tested directly).

Keys are the server's own ids: a manga's ref URL is its WebUI page
(`{server}/manga/{id}`), which the adapter reads the id back from, so the
reconcile pass and a retried `sync_manga` job find the manga again from the
URL alone. A chapter's key is its server id, its URL the WebUI reader's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from decimal import Decimal
from urllib.parse import urljoin

from catalog.chapter_numbers import CHAPTER, EXTRA, MAX_NUMBER, ChapterName, classify, number_extras
from sources.base import MangaMetadata, SourceChapter, SourceMangaRef
from sources.suwayomi.answers import ServerChapter, ServerManga

_MANGA_URL = re.compile(r"/manga/(\d+)/?$")
_CENTS = Decimal("0.01")
# Suwayomi's MangaStatus values (Mihon's SManga status codes) in our vocabulary (sources.statuses).
STATUSES = {
    "ONGOING": "ongoing",
    "COMPLETED": "completed",
    "PUBLISHING_FINISHED": "completed",
    "ON_HIATUS": "hiatus",
    "CANCELLED": "cancelled",
}


def manga_url(server: str, manga_id: int) -> str:
    return urljoin(server, f"manga/{manga_id}")


def manga_id_from_url(url: str) -> int | None:
    """The server's manga id in a ref URL made by `manga_url` (None for any other URL)."""
    match = _MANGA_URL.search(url.split("?")[0])
    return int(match.group(1)) if match else None


def manga_ref(server: str, manga: ServerManga) -> SourceMangaRef:
    return SourceMangaRef(key=str(manga.id), url=manga_url(server, manga.id), title=manga.title)


def metadata(manga: ServerManga) -> MangaMetadata:
    people = [p.strip() for field in (manga.author, manga.artist) if field for p in field.split(",")]
    return MangaMetadata(
        title=manga.title,
        description=(manga.description or "").strip(),
        authors=tuple(dict.fromkeys(p for p in people if p)),
        status=STATUSES.get(manga.status, "unknown"),
        tags=tuple(g.strip() for g in manga.genre if g.strip()),
    )


def cover_url(server: str, manga: ServerManga) -> str:
    """The cover through the server's thumbnail endpoint (a relative path in the answer), or ''."""
    return urljoin(server, manga.thumbnail_url) if manga.thumbnail_url else ""


def published_at(upload_date_ms: int) -> dt.datetime | None:
    """`uploadDate` is milliseconds since the epoch; 0 (what a source that prints no date gives) is no date."""
    if upload_date_ms <= 0:
        return None
    return dt.datetime.fromtimestamp(upload_date_ms / 1000, tz=dt.UTC)


def chapter_name(chapter: ServerChapter) -> ChapterName:
    """Kind, volume and number of a chapter: the extension's number when it has one, else the name's.

    Mihon's extensions give -1 for a chapter they could not number: the name
    is read the way HTML sites' are, and one with no number at all becomes an
    extra (numbered after the extra before it), so it is kept, not dropped.
    An extra ("Side Story 3") stays an extra even when the extension numbered
    it 3, so it does not collide with the main chapter 3.
    """
    name = classify(chapter.name)
    if name.kind == EXTRA:
        return name
    if 0 <= chapter.chapter_number <= MAX_NUMBER:
        number = Decimal(repr(chapter.chapter_number)).quantize(_CENTS)
        return ChapterName(CHAPTER, name.volume, number, name.title if name.number == number else chapter.name)
    if name.number is None:
        return ChapterName(EXTRA, name.volume, None, chapter.name)
    return name


def source_chapters(
    server: str, chapters: Sequence[ServerChapter], *, scanlator: str | None = None
) -> tuple[SourceChapter, ...]:
    """The chapter list as the source protocol's records, newest first like the server lists them."""
    kept = [c for c in chapters if scanlator is None or (c.scanlator or "").casefold() == scanlator.casefold()]
    names = number_extras([chapter_name(c) for c in kept])
    return tuple(
        SourceChapter(
            key=str(chapter.id),
            number=name.number if name.number is not None else Decimal(0),
            title=name.title,
            url=urljoin(server, f"manga/{chapter.manga_id}/chapter/{chapter.source_order}"),
            published_at=published_at(chapter.upload_date_ms),
            kind=name.kind,
            volume=name.volume,
        )
        for chapter, name in zip(kept, names, strict=True)
    )


def chapter_id(chapter: SourceChapter) -> int | None:
    """The server's chapter id a SourceChapter carries as its key (None when the key is not one)."""
    return int(chapter.key) if chapter.key.isdigit() else None
