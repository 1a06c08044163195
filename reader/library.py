"""The queries behind every reader listing: one query per page of rows, whatever the page size.

Pages are fetched `size + 1` rows at a time so "is there a next page" needs
no COUNT over a 100k-manga table. Listings in title order also seek: their
next and previous links carry the (title, id) of the page's edge row, so
page 1,000 of a 100k-manga library costs what page 1 does instead of an
OFFSET that walks 50,000 rows. A bare `page=N` (a client jumping) still
works by offset. The latest-update feed seeks the same way on (latest
chapter, arrival, id) (`LatestCursor`).

A manga crawled from several sources is one series: the lists walk each
series' lead (catalog.series_leads) alone, so the cursors seek on lead rows
through the same indexes, and a series is found (search), tagged or
bookmarked through any of its copies.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import Exists, Field, OuterRef, Q, QuerySet

from catalog import inputs
from catalog.api import seek
from catalog.chapter_order import READING_ORDER
from catalog.models import LATEST_CHAPTER_ORDER, Bookmark, Chapter, Manga, Tag
from catalog.search import title_matches
from catalog.series_books import shown_chapters
from catalog.series_leads import leads
from reader.models import ReadProgress
from reader.progress import stored_pages

PAGE_SIZE = 50
MANGA_FIELDS = ("id", "title", "description", "cover", "latest_chapter_at", "updated_at", "created_at")

T = TypeVar("T")


@dataclass(frozen=True)
class Paged(Generic[T]):
    rows: list[T]
    page: int
    has_next: bool
    # Extra query parameters of the next and previous links (a seek cursor).
    next_params: dict[str, str] = field(default_factory=dict)
    previous_params: dict[str, str] = field(default_factory=dict)

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def paged(queryset: QuerySet[Any], page: int, size: int = PAGE_SIZE) -> Paged[Any]:
    """Page `page` of `queryset` by offset, in one query.

    Past the first page the offset walk picks the page's keys alone, and only
    those rows are loaded with their annotations: a 2,000-chapter feed's page
    40 computes its 50 chapters' page counts, not those of the 1,950 it skips.
    """
    start = (page - 1) * size
    if start == 0:
        rows = list(queryset[: size + 1])
    else:
        keys = queryset.values("pk")[start : start + size + 1]
        rows = list(queryset.filter(pk__in=keys))
    return Paged(rows[:size], page, len(rows) > size)


class BadCursor(ValueError):
    """A seek cursor that this server did not write."""


@dataclass(frozen=True)
class TitleCursor:
    """The (title, id) of a row in title order: where the next or previous page starts."""

    title: str
    id: uuid.UUID

    @classmethod
    def of(cls, manga: Manga) -> TitleCursor:
        return cls(manga.title, manga.id)

    def encode(self) -> str:
        raw = json.dumps([self.title, str(self.id)], ensure_ascii=False).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> TitleCursor:
        try:
            title, key = inputs.loads_bounded(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            if not isinstance(title, str):
                raise TypeError(title)
            return cls(title, uuid.UUID(key))
        except (binascii.Error, ValueError, TypeError, AttributeError) as exc:
            raise BadCursor("the page cursor is not one this server wrote; follow the feed's own links") from exc


def _after(cursor: TitleCursor) -> Q:
    # The redundant title__gte bounds the index scan; the OR breaks ties on id.
    return Q(title__gte=cursor.title) & (Q(title__gt=cursor.title) | Q(id__gt=cursor.id))


def _before(cursor: TitleCursor) -> Q:
    return Q(title__lte=cursor.title) & (Q(title__lt=cursor.title) | Q(id__lt=cursor.id))


def paged_by_title(
    queryset: QuerySet[Manga],
    page: int,
    *,
    after: TitleCursor | None = None,
    before: TitleCursor | None = None,
    size: int = PAGE_SIZE,
) -> Paged[Manga]:
    """A page of `queryset` in (title, id) order: sought from a cursor when one is given, else by offset."""
    if after is not None:
        rows = list(queryset.filter(_after(after)).order_by("title", "id")[: size + 1])
        has_next = len(rows) > size
        rows = rows[:size]
    elif before is not None:
        # Walk backwards from the cursor, then put the page back in title order.
        rows = list(queryset.filter(_before(before)).order_by("-title", "-id")[:size])[::-1]
        has_next = True
    else:
        plain = paged(queryset.order_by("title", "id"), page, size)
        rows, has_next = plain.rows, plain.has_next
    return Paged(
        rows,
        page,
        has_next,
        next_params={"after": TitleCursor.of(rows[-1]).encode()} if rows and has_next else {},
        previous_params={"before": TitleCursor.of(rows[0]).encode()} if rows and page > 1 else {},
    )


def paged_by_keys(
    queryset: QuerySet[Any],
    page: int,
    keys: Sequence[seek.Key],
    *,
    after: str | None = None,
    before: str | None = None,
    size: int = PAGE_SIZE,
    annotated: Mapping[str, Field[Any, Any]] | None = None,
) -> Paged[Any]:
    """A page of `queryset` in the order of `keys` (catalog.api.seek, ending in the primary key): sought from
    an `after` or `before` cursor when one is given, else by offset. BadCursor for a cursor we did not write.
    `annotated`: the field of each key that is an annotation of `queryset`."""
    ordered = queryset.order_by(*seek.order_of(keys))
    model = queryset.model
    if after and before:
        raise BadCursor("give one cursor: `after` pages forward, `before` pages back")
    try:
        if after:
            found = list(ordered.filter(seek.after(keys, seek.decode(after, model, keys, annotated)))[: size + 1])
            rows, has_next = found[:size], len(found) > size
        elif before:
            backward = ordered.filter(seek.before(keys, seek.decode(before, model, keys, annotated)))
            rows = list(backward.order_by(*seek.order_of(seek.reversed_keys(keys)))[:size])[::-1]
            has_next = True
        else:
            plain = paged(ordered, page, size)
            rows, has_next = plain.rows, plain.has_next
    except seek.BadCursor as exc:
        raise BadCursor(str(exc)) from exc
    return Paged(
        rows,
        page,
        has_next,
        next_params={"after": seek.encode(rows[-1], keys)} if rows and has_next else {},
        previous_params={"before": seek.encode(rows[0], keys)} if rows and page > 1 else {},
    )


@dataclass(frozen=True)
class LatestCursor:
    """The (latest chapter, arrival, id) of a row in latest-update order: where the next or previous page starts.

    The order (catalog.models.LATEST_CHAPTER_ORDER) puts mangas with no chapter yet last, so a cursor's
    `latest` may be None; a page that crosses from the dated rows to those is read in two index walks.
    """

    latest: datetime | None
    created: datetime
    id: uuid.UUID

    @classmethod
    def of(cls, manga: Manga) -> LatestCursor:
        return cls(manga.latest_chapter_at, manga.created_at, manga.id)

    def encode(self) -> str:
        values = [self.latest.isoformat() if self.latest else None, self.created.isoformat(), str(self.id)]
        return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> LatestCursor:
        try:
            latest, created, key = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            if not isinstance(created, str) or not (latest is None or isinstance(latest, str)):
                raise TypeError(created)
            when = [None if v is None else datetime.fromisoformat(v) for v in (latest, created)]
            if any(v is not None and v.tzinfo is None for v in when):
                raise ValueError("a cursor's times carry their zone")
            return cls(when[0], when[1], uuid.UUID(key))  # type: ignore[arg-type]
        except (binascii.Error, ValueError, TypeError, AttributeError) as exc:
            raise BadCursor("the page cursor is not one this server wrote; follow the feed's own links") from exc


_DATED = Q(latest_chapter_at__isnull=False)
_UNDATED = Q(latest_chapter_at__isnull=True)


def _later(cursor: LatestCursor, newer: bool) -> Q:
    """Rows after `cursor` in latest-update order (`newer`: before it) among rows dated as it is.

    The leading bound (latest <= x, or >= going back) is what starts the index scan at the cursor.
    """
    side = "gt" if newer else "lt"
    tie = Q(**{f"created_at__{side}": cursor.created}) | Q(created_at=cursor.created, **{f"id__{side}": cursor.id})
    if cursor.latest is None:
        return _UNDATED & Q(**{f"created_at__{side}e": cursor.created}) & tie
    bound = Q(**{f"latest_chapter_at__{side}e": cursor.latest})
    return (
        _DATED
        & bound
        & (Q(**{f"latest_chapter_at__{side}": cursor.latest}) | (Q(latest_chapter_at=cursor.latest) & tie))
    )


def paged_by_latest(
    queryset: QuerySet[Manga],
    page: int,
    *,
    after: LatestCursor | None = None,
    before: LatestCursor | None = None,
    size: int = PAGE_SIZE,
) -> Paged[Manga]:
    """A page of `queryset` in latest-update order: sought from a cursor when one is given, else by offset."""
    ordered = queryset.order_by(*LATEST_CHAPTER_ORDER)
    if after is not None:
        rows = list(ordered.filter(_later(after, newer=False))[: size + 1])
        if after.latest is not None and len(rows) <= size:  # past the dated rows: the undated ones follow
            rows += list(ordered.filter(_UNDATED)[: size + 1 - len(rows)])
        has_next = len(rows) > size
        rows = rows[:size]
    elif before is not None:
        backward = ordered.reverse()
        rows = list(backward.filter(_later(before, newer=True))[: size + 1])
        if before.latest is None and len(rows) <= size:  # back past the undated rows: the dated ones precede
            rows += list(backward.filter(_DATED)[: size + 1 - len(rows)])
        rows = rows[:size][::-1]
        has_next = True
    else:
        plain = paged(ordered, page, size)
        rows, has_next = plain.rows, plain.has_next
    return Paged(
        rows,
        page,
        has_next,
        next_params={"after": LatestCursor.of(rows[-1]).encode()} if rows and has_next else {},
        previous_params={"before": LatestCursor.of(rows[0]).encode()} if rows and page > 1 else {},
    )


def latest_mangas() -> QuerySet[Manga]:
    return leads().only(*MANGA_FIELDS).order_by(*LATEST_CHAPTER_ORDER)


def mangas_by_title() -> QuerySet[Manga]:
    return leads().only(*MANGA_FIELDS).order_by("title", "id")


def search_mangas(q: str) -> QuerySet[Manga]:
    """The series whose copies the API's search finds (any title, accents and case ignored), each once by its
    lead, by title for the OPDS pager."""
    found = title_matches(Manga.objects.order_by(), q).values("series_id")
    return mangas_by_title().filter(series_id__in=found)


def mangas_tagged(tag: Tag) -> QuerySet[Manga]:
    """The series one of whose copies carries `tag`, each once by its lead."""
    return mangas_by_title().filter(series_id__in=Manga.objects.order_by().filter(tags=tag).values("series_id"))


def series_unread(user: Any) -> Exists:
    """Annotation for a lead: some copy in its series has a readable chapter `user` has not completed.

    Twins share completion (reader.progress), so a chapter read in one copy is completed in the others too.
    """
    done = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
    unread = Chapter.objects.filter(
        manga__series_id=OuterRef("series_id"), dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE
    ).exclude(Exists(done))
    return Exists(unread)


def bookmarked_mangas(user: Any) -> QuerySet[Manga]:
    """The series `user` bookmarked through any copy (either kind), each once by its lead: those with chapters
    still to read first, then by latest chapter."""
    mine = Bookmark.objects.filter(user=user, manga__series_id=OuterRef("series_id"))
    return (
        leads()
        .only(*MANGA_FIELDS)
        .filter(Exists(mine))
        .annotate(unread=series_unread(user))
        .order_by("-unread", *LATEST_CHAPTER_ORDER)
    )


def readable_shown(lead: Manga) -> QuerySet[Chapter]:
    """The downloaded chapters of `lead`'s series as readers show them (one per chapter key), in reading order,
    with their stored page count as `stored_pages`."""
    return (
        shown_chapters(lead)
        .filter(sync_state=Chapter.SyncState.DONE)
        .annotate(stored_pages=stored_pages())
        .order_by(*READING_ORDER)
    )


def tags() -> QuerySet[Tag]:
    return Tag.objects.order_by("name", "id")
