"""A series' chapter list: the union of its sources' chapters, one entry per chapter key (pure, no database).

Each key (catalog.chapter_keys: kind, volume, number) shows one chapter:
the one from the first source in the series' order that has it readable
(downloaded), else the first source that lists it at all; the other
sources' copies stay as alternates a reader can switch to. Entries follow the
reading order of catalog.chapter_order: main chapters by volume (chapters
without a volume after those with one) and number, then the extras.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, Protocol, TypeVar

from catalog.chapter_keys import ChapterKey, chapter_key


class Listed(Protocol):
    source_id: str
    kind: str
    volume: int | None
    number: Decimal
    title: str


T = TypeVar("T", bound=Listed)


@dataclass(frozen=True)
class SeriesChapter(Generic[T]):
    key: ChapterKey
    shown: T
    alternates: tuple[T, ...]


def key_of(chapter: Listed) -> ChapterKey:
    return chapter_key(chapter.kind, chapter.volume, chapter.number, chapter.title)


def reading_position(key: ChapterKey) -> tuple[Any, ...]:
    """catalog.chapter_order's reading order, for keys."""
    return (key.kind, key.volume is None, key.volume or 0, key.number is None, key.number or 0, key.name)


def union_chapters(
    chapters: Iterable[T], source_order: Sequence[str], readable: Callable[[T], bool] = lambda _: True
) -> list[SeriesChapter[T]]:
    """One entry per chapter key, in reading order, each shown from the most preferred source (see module doc)."""
    rank = {source: index for index, source in enumerate(source_order)}
    by_key: dict[ChapterKey, list[T]] = {}
    for chapter in chapters:
        by_key.setdefault(key_of(chapter), []).append(chapter)
    entries = []
    for key, copies in by_key.items():
        # Stable: copies from one source keep the order they came in (the caller's reading order).
        ordered = sorted(copies, key=lambda c: (not readable(c), rank.get(c.source_id, len(rank))))
        entries.append(SeriesChapter(key, ordered[0], tuple(ordered[1:])))
    return sorted(entries, key=lambda entry: reading_position(entry.key))
