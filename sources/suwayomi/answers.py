"""Suwayomi's GraphQL answers read into typed records, each field checked against what the schema promises.

A reply that breaks the shape (a field missing, a string where the schema
says Int) is a `MalformedAnswer` naming the field's path: the server is not
the one the adapter was written for, which retrying will not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sources.errors import PermanentError


class MalformedAnswer(PermanentError):
    """A Suwayomi reply whose shape the recorded schema does not allow."""


@dataclass(frozen=True)
class ServerSource:
    id: str
    name: str
    display_name: str
    lang: str
    is_nsfw: bool
    supports_latest: bool


@dataclass(frozen=True)
class ServerExtension:
    pkg_name: str
    name: str
    lang: str
    is_installed: bool


@dataclass(frozen=True)
class ServerManga:
    id: int
    title: str
    url: str
    real_url: str | None
    thumbnail_url: str | None
    description: str | None
    author: str | None
    artist: str | None
    genre: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class ServerChapter:
    id: int
    manga_id: int
    name: str
    url: str
    real_url: str | None
    chapter_number: float
    scanlator: str | None
    upload_date_ms: int
    source_order: int


@dataclass(frozen=True)
class MangaPage:
    mangas: tuple[ServerManga, ...]
    has_next_page: bool


class _Reader:
    """Typed reads from one JSON object, each failure naming the field's path in the reply."""

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise MalformedAnswer(f"Suwayomi answered {type(data).__name__} at {path}, not an object")
        self.data, self.path = data, path

    def _get(self, key: str, kinds: tuple[type, ...], *, optional: bool = False) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            wanted = " or ".join(k.__name__ for k in kinds)
            raise MalformedAnswer(f"Suwayomi answered {value!r} at {self.path}.{key}, not {wanted}")
        return value

    def text(self, key: str) -> str:
        return self._get(key, (str,))

    def maybe_text(self, key: str) -> str | None:
        return self._get(key, (str,), optional=True)

    def integer(self, key: str) -> int:
        return self._get(key, (int,))

    def long(self, key: str) -> int:
        """A LongString: a 64-bit number sent as a string (JSON numbers lose precision past 2**53)."""
        raw = self._get(key, (str, int))
        try:
            return int(raw)
        except ValueError:
            raise MalformedAnswer(f"Suwayomi answered {raw!r} at {self.path}.{key}, not a LongString") from None

    def number(self, key: str) -> float:
        return float(self._get(key, (int, float)))

    def flag(self, key: str) -> bool:
        return self._get(key, (bool,))

    def child(self, key: str) -> _Reader:
        return _Reader(self.data.get(key), f"{self.path}.{key}")

    def items(self, key: str) -> list[_Reader]:
        values = self._get(key, (list,))
        return [_Reader(value, f"{self.path}.{key}[{i}]") for i, value in enumerate(values)]

    def strings(self, key: str) -> tuple[str, ...]:
        values = self._get(key, (list,))
        if not all(isinstance(v, str) for v in values):
            raise MalformedAnswer(f"Suwayomi answered a non-string in {self.path}.{key}")
        return tuple(values)


def read_sources(data: Any) -> list[ServerSource]:
    return [
        ServerSource(
            id=str(node.long("id")),
            name=node.text("name"),
            display_name=node.text("displayName"),
            lang=node.text("lang"),
            is_nsfw=node.flag("isNsfw"),
            supports_latest=node.flag("supportsLatest"),
        )
        for node in _Reader(data, "data").child("sources").items("nodes")
    ]


def read_extensions(data: Any) -> list[ServerExtension]:
    return [
        ServerExtension(node.text("pkgName"), node.text("name"), node.text("lang"), node.flag("isInstalled"))
        for node in _Reader(data, "data").child("extensions").items("nodes")
    ]


def read_manga(node: _Reader) -> ServerManga:
    return ServerManga(
        id=node.integer("id"),
        title=node.text("title"),
        url=node.text("url"),
        real_url=node.maybe_text("realUrl"),
        thumbnail_url=node.maybe_text("thumbnailUrl"),
        description=node.maybe_text("description"),
        author=node.maybe_text("author"),
        artist=node.maybe_text("artist"),
        genre=node.strings("genre"),
        status=node.text("status"),
    )


def read_manga_page(data: Any) -> MangaPage:
    payload = _Reader(data, "data").child("fetchSourceManga")
    return MangaPage(tuple(read_manga(m) for m in payload.items("mangas")), payload.flag("hasNextPage"))


def read_fetched_manga(data: Any) -> ServerManga:
    return read_manga(_Reader(data, "data").child("fetchManga").child("manga"))


def read_chapters(data: Any) -> list[ServerChapter]:
    return [
        ServerChapter(
            id=node.integer("id"),
            manga_id=node.integer("mangaId"),
            name=node.text("name"),
            url=node.text("url"),
            real_url=node.maybe_text("realUrl"),
            chapter_number=node.number("chapterNumber"),
            scanlator=node.maybe_text("scanlator"),
            upload_date_ms=node.long("uploadDate"),
            source_order=node.integer("sourceOrder"),
        )
        for node in _Reader(data, "data").child("fetchChapters").items("chapters")
    ]


def read_pages(data: Any) -> tuple[str, ...]:
    return _Reader(data, "data").child("fetchChapterPages").strings("pages")


def read_access_token(data: Any) -> str:
    return _Reader(data, "data").child("login").text("accessToken")


def read_server_version(data: Any, field: str = "aboutServer") -> str:
    return _Reader(data, "data").child(field).text("version")
