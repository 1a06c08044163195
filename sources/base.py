"""The Source adapter protocol and the records it returns.

An adapter turns one site into refs (newest first), manga details, chapter
page URLs and streamed image bytes. The pipeline only talks to this protocol,
so the built-in demo site and a selector-configured real site run through the
same code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol


@dataclass(frozen=True)
class SourceMangaRef:
    key: str
    url: str
    title: str


@dataclass(frozen=True)
class MangaMetadata:
    title: str
    alt_titles: tuple[str, ...] = ()
    description: str = ""
    authors: tuple[str, ...] = ()
    status: str = "unknown"
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceChapter:
    """A chapter as the source lists it; kind, volume and number follow catalog.chapter_numbers."""

    key: str
    number: Decimal
    title: str = ""
    url: str = ""
    published_at: dt.datetime | None = None
    kind: str = "chapter"  # or "extra": side stories, specials, notices, numbered apart from the main story
    volume: int | None = None


@dataclass(frozen=True)
class MangaDetail:
    metadata: MangaMetadata
    cover_url: str
    chapters: tuple[SourceChapter, ...] = field(default_factory=tuple)


class ImageStream(Protocol):
    """An open image response: headers plus an iterator of byte chunks. Always closed by the caller."""

    content_type: str
    declared_length: int | None

    def iter_bytes(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class Source(Protocol):
    source_id: str

    def list_page(self, n: int) -> tuple[list[SourceMangaRef], bool]:
        """Refs on list page `n` (1-based, newest first) and whether a next page exists."""

    def manga_detail(self, ref: SourceMangaRef) -> MangaDetail: ...

    def chapter_pages(self, chapter: SourceChapter) -> list[str]:
        """Absolute image URLs of a chapter's pages, in reading order."""

    def open_image(self, url: str) -> ImageStream:
        """Start a streamed image download (refused when `url` is off the source's hosts)."""

    def close(self) -> None: ...
