"""Komga's query parameters, parsed into plain values; a bad value raises `BadParam` naming the parameter.

Spring binds a list parameter from repeated keys and from comma-separated
values alike (Mihon sends `library_id=a,b`, and `read_status` twice), so
both forms are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.http import QueryDict

from catalog.inputs import BadInteger, parse_bounded_int
from catalog.models import Chapter, Manga

DEFAULT_PAGE_SIZE = 20
_NUMBER = Chapter._meta.get_field("number")
MAX_CHAPTER_NUMBER = Decimal(10) ** (_NUMBER.max_digits - _NUMBER.decimal_places)  # type: ignore[attr-defined]
MAX_PAGE_SIZE = 500

# Komga's series statuses and ours. Komga has no "unknown": such a series reads as ONGOING, Komga's default.
STATUS_TO_KOMGA = {
    Manga.Status.ONGOING: "ONGOING",
    Manga.Status.COMPLETED: "ENDED",
    Manga.Status.HIATUS: "HIATUS",
    Manga.Status.CANCELLED: "ABANDONED",
    Manga.Status.UNKNOWN: "ONGOING",
}
KOMGA_STATUSES = ("ENDED", "ONGOING", "ABANDONED", "HIATUS")
READ_STATUSES = ("UNREAD", "READ", "IN_PROGRESS")
MEDIA_STATUSES = ("UNKNOWN", "ERROR", "READY", "UNSUPPORTED", "OUTDATED")
SERIES_SORTS = ("metadata.titleSort", "name", "createdDate", "created", "lastModifiedDate", "lastModified")
BOOK_SORTS = ("metadata.numberSort", "number", "createdDate", "created", "lastModifiedDate", "lastModified")


class BadParam(ValueError):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message


def values(query: QueryDict, name: str) -> list[str]:
    return [part.strip() for raw in query.getlist(name) for part in raw.split(",") if part.strip()]


def choices(query: QueryDict, name: str, allowed: tuple[str, ...]) -> list[str]:
    picked = [v.upper() for v in values(query, name)]
    wrong = [v for v in picked if v not in allowed]
    if wrong:
        raise BadParam(name, f"{wrong[0]!r} is not one of {', '.join(allowed)}")
    return picked


def boolean(query: QueryDict, name: str) -> bool | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    raise BadParam(name, "must be true or false")


def integer(query: QueryDict, name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse_bounded_int(raw, low=low, high=high)
    except BadInteger as exc:
        raise BadParam(name, f"must be an integer from {low} to {high}") from exc


@dataclass(frozen=True)
class Sort:
    key: str
    descending: bool


def sorts(query: QueryDict, allowed: tuple[str, ...]) -> list[Sort]:
    """`sort=metadata.titleSort,desc` (repeatable): Spring's "property,direction" pairs."""
    picked = []
    for raw in query.getlist("sort"):
        key, _, direction = raw.partition(",")
        key, direction = key.strip(), (direction.strip().lower() or "asc")
        if key not in allowed:
            raise BadParam("sort", f"{key!r} is not one of {', '.join(allowed)}")
        if direction not in ("asc", "desc"):
            raise BadParam("sort", "the direction after the comma must be asc or desc")
        picked.append(Sort(key, direction == "desc"))
    return picked


@dataclass(frozen=True)
class Paging:
    number: int
    size: int
    unpaged: bool

    @property
    def offset(self) -> int:
        return self.number * self.size


def paging(query: QueryDict) -> Paging:
    unpaged = boolean(query, "unpaged") is True
    return Paging(
        number=0 if unpaged else integer(query, "page", 0, 0, 1_000_000),
        size=integer(query, "size", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
        unpaged=unpaged,
    )


@dataclass(frozen=True)
class Author:
    name: str
    role: str


def authors(query: QueryDict) -> list[Author]:
    """`author=name,role` (repeatable); a name may itself hold commas, the role is after the last one."""
    picked = []
    for raw in query.getlist("author"):
        name, sep, role = raw.rpartition(",")
        if not sep or not name.strip():
            raise BadParam("author", "must be 'name,role'")
        picked.append(Author(name.strip(), role.strip().lower()))
    return picked


@dataclass(frozen=True)
class SeriesFilter:
    search: str = ""
    library_ids: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    read_statuses: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    authors: list[Author] = field(default_factory=list)
    publishers: list[str] = field(default_factory=list)
    deleted: bool | None = None
    sort: list[Sort] = field(default_factory=list)


def series_filter(query: QueryDict) -> SeriesFilter:
    return SeriesFilter(
        search=query.get("search", "").strip()[:200],
        library_ids=values(query, "library_id"),
        statuses=choices(query, "status", KOMGA_STATUSES),
        read_statuses=choices(query, "read_status", READ_STATUSES),
        # Our tags are what Komga calls genres; a client filtering by either means them.
        tags=values(query, "genre") + values(query, "tag"),
        authors=authors(query),
        publishers=values(query, "publisher"),
        deleted=boolean(query, "deleted"),
        sort=sorts(query, SERIES_SORTS),
    )


@dataclass(frozen=True)
class BookFilter:
    media_statuses: list[str] = field(default_factory=list)
    read_statuses: list[str] = field(default_factory=list)
    deleted: bool | None = None
    sort: list[Sort] = field(default_factory=list)


def book_filter(query: QueryDict) -> BookFilter:
    return BookFilter(
        media_statuses=choices(query, "media_status", MEDIA_STATUSES),
        read_statuses=choices(query, "read_status", READ_STATUSES),
        deleted=boolean(query, "deleted"),
        sort=sorts(query, BOOK_SORTS),
    )


def number_sort(raw: object) -> Decimal:
    """Mihon's tracker sends `lastBookNumberSortRead` as a JSON number (a float)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise BadParam("lastBookNumberSortRead", "must be a number")
    try:
        number = Decimal(str(raw))
    except InvalidOperation as exc:
        raise BadParam("lastBookNumberSortRead", "must be a number") from exc
    # Past the chapter number's column (10 digits, 2 of them decimals) the database cannot compare it:
    # a 500 on PostgreSQL for "1e999999" sent as a string.
    if not number.is_finite() or abs(number) >= MAX_CHAPTER_NUMBER:
        raise BadParam(
            "lastBookNumberSortRead", f"must be a number between -{MAX_CHAPTER_NUMBER} and {MAX_CHAPTER_NUMBER}"
        )
    return number
