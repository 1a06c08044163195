"""The Komga API's listings as querysets that cost a fixed number of queries, whatever the page size.

A series row carries its book counts for the reader as correlated subqueries
(no GROUP BY over joined rows, no query per series); its tags come in one
prefetch. A series' books are few enough (hundreds) to number and filter in
memory after one query, the way Komga numbers them: by position in the series.
Progress is looked up by `user.pk`: an anonymous reader's (LIBRARY_PUBLIC_READ)
is None, which no progress row has, so they read everything as unread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce

from catalog.chapter_numbers import CHAPTER, EXTRA
from catalog.chapter_order import READING_ORDER, before, reading_key
from catalog.models import LATEST_CHAPTER_ORDER, Chapter, Manga, MangaSource, Page, Tag
from catalog.search import title_matches
from catalog.series_books import chapter_union, shown_chapters
from catalog.series_chapters import key_of
from catalog.series_leads import is_merged, lead_of, leads
from reader.komga import params
from reader.komga.params import BookFilter, SeriesFilter
from reader.komga.ranking import ranked_search
from reader.models import ReadProgress
from reader.progress import progress_by_chapter, stored_pages

_KOMGA_TO_STATUS: dict[str, list[str]] = {}
for ours, theirs in params.STATUS_TO_KOMGA.items():
    _KOMGA_TO_STATUS.setdefault(theirs, []).append(ours)


def _count(rows: QuerySet[Any]) -> Coalesce:
    counted = rows.order_by().values("_one").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def readable(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    return chapters.filter(dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE)


def _book_counts(user: Any) -> dict[str, Coalesce]:
    books = readable(Chapter.objects.filter(manga=OuterRef("pk"))).annotate(_one=F("manga_id"))
    progress = ReadProgress.objects.filter(
        user_id=user.pk,
        chapter__manga=OuterRef("pk"),
        chapter__dropped_at__isnull=True,
        chapter__sync_state=Chapter.SyncState.DONE,
    ).annotate(_one=F("chapter__manga_id"))
    return {
        "books_count": _count(books),
        "books_read": _count(progress.filter(completed=True)),
        "books_in_progress": _count(progress.filter(completed=False, last_page__gt=0)),
    }


def _library_id() -> Subquery:
    first = MangaSource.objects.filter(manga=OuterRef("pk")).order_by("created_at", "id").values("source_id")[:1]
    return Subquery(first)


def series_rows(user: Any) -> QuerySet[Manga]:
    """Every series' lead as a Komga series for `user`: book counts, library id, tags (one prefetch).

    The counts are the lead's own chapters'; a merged series' entries are recounted over the union
    (reader.komga.series.with_union_counts).
    """
    return (
        leads()
        .annotate(**_book_counts(user), library_id=_library_id())
        .prefetch_related(Prefetch("tags", queryset=Tag.objects.order_by("name")))
    )


def _read_status_q(user: Any, statuses: list[str]) -> Q:
    """Komga's series read states as EXISTS tests, which PostgreSQL runs as (anti-)joins over the whole library.

    READ: it has books and none is unfinished; UNREAD: no book read or begun;
    IN_PROGRESS: some book read or begun, some unfinished.

    The tests ask over every chapter of the series (all its copies), not the
    lead's alone: a merged series' books are one copy per chapter key, and
    the copies share completion (reader.progress.twins), so "no readable
    chapter of the series unfinished" is "no book unfinished", and a chapter
    begun in any copy has begun the series. For a series of one manga the
    series' chapters are the lead's, the same test as before series.
    """
    in_series = Q(manga__series_id=OuterRef("series_id"))
    books = readable(Chapter.objects.filter(in_series))
    finished = ReadProgress.objects.filter(user_id=user.pk, chapter=OuterRef("pk"), completed=True)
    unfinished = Exists(books.exclude(Exists(finished)))
    started = Exists(
        ReadProgress.objects.filter(
            Q(completed=True) | Q(last_page__gt=0),
            user_id=user.pk,
            chapter__manga__series_id=OuterRef("series_id"),
            chapter__dropped_at__isnull=True,
            chapter__sync_state=Chapter.SyncState.DONE,
        )
    )
    wanted = Q()
    if "READ" in statuses:
        wanted |= Q(Exists(books)) & ~Q(unfinished)
    if "UNREAD" in statuses:
        wanted |= ~Q(started)
    if "IN_PROGRESS" in statuses:
        wanted |= Q(started) & Q(unfinished)
    return wanted


def _author_q(name: str) -> Q:
    # Authors are a JSON list of names; SQLite cannot ask a JSON array whether it holds a value.
    if connection.features.supports_json_field_contains:
        return Q(authors__contains=[name])
    return Q(authors__icontains=f'"{name}"')


def _sorted(rows: QuerySet[Manga], wanted: list[params.Sort], searched: str) -> QuerySet[Manga]:
    if not wanted:
        return ranked_search(rows, searched) if searched else rows.order_by(*LATEST_CHAPTER_ORDER)
    order: list[Any] = []
    for sort in wanted:
        if sort.key in ("metadata.titleSort", "name"):
            order.append(F("title").desc() if sort.descending else F("title").asc())
        elif sort.key in ("createdDate", "created"):
            order.append(F("created_at").desc() if sort.descending else F("created_at").asc())
        elif sort.descending:
            order.extend(LATEST_CHAPTER_ORDER[:2])
        else:
            order.append(F("latest_chapter_at").asc(nulls_last=True))
    return rows.order_by(*order, "id")


def series_page(user: Any, ids: list[Any]) -> list[Manga]:
    """The series of `ids` (one page of `filtered_series`), in that order, as `series_rows` carries them.

    The page is cut first and annotated after: PostgreSQL computes a row's select list before the LIMIT
    drops it, so annotating the whole list would count the books of every series a deep page skips.
    """
    rows = {m.pk: m for m in series_rows(user).filter(pk__in=ids)}
    return [rows[pk] for pk in ids if pk in rows]


def filtered_series(user: Any, wanted: SeriesFilter) -> QuerySet[Manga]:
    """The leads a series list shows, filtered and in order (no annotation: `series_page` adds them to a page)."""
    rows = leads()
    if wanted.deleted is True or wanted.publishers:
        return rows.none()  # nothing here is deleted, and no series has a publisher
    if wanted.search:
        # A series is found by any copy's title or alternative titles, not only its lead's.
        rows = rows.filter(series_id__in=title_matches(Manga.objects.all(), wanted.search).values("series_id"))
    if wanted.library_ids:
        # A series is in a library (a source) when any of its copies comes from it.
        from_library = MangaSource.objects.filter(
            manga__series_id=OuterRef("series_id"), source_id__in=wanted.library_ids
        )
        rows = rows.filter(Exists(from_library))
    if wanted.statuses:
        rows = rows.filter(status__in=[ours for s in wanted.statuses for ours in _KOMGA_TO_STATUS[s]])
    if wanted.tags:
        rows = rows.filter(Exists(Tag.objects.filter(mangas=OuterRef("pk"), name__in=wanted.tags)))
    for author in wanted.authors:
        rows = rows.filter(_author_q(author.name)) if author.role == "writer" else rows.none()
    if wanted.read_statuses:
        rows = rows.filter(_read_status_q(user, wanted.read_statuses))
    return _sorted(rows, wanted.sort, wanted.search if not wanted.sort else "")


def stored_bytes() -> Coalesce:
    summed = (
        Page.objects.filter(chapter=OuterRef("pk")).order_by().values("chapter").annotate(n=Sum("bytes")).values("n")
    )
    return Coalesce(Subquery(summed), 0)


def book_rows() -> QuerySet[Chapter]:
    return Chapter.objects.select_related("manga").annotate(stored_pages=stored_pages(), stored_bytes=stored_bytes())


def shown_readable(lead: Manga) -> QuerySet[Chapter]:
    """The series' shown chapters that can be read, in reading order, with `stored_pages`."""
    shown = shown_chapters(lead).filter(sync_state=Chapter.SyncState.DONE)
    return shown.annotate(stored_pages=stored_pages()).order_by(*READING_ORDER)


@dataclass(frozen=True)
class Book:
    chapter: Chapter
    position: int  # 1-based place in the series, Komga's book "number"
    progress: ReadProgress | None
    extra_position: int = 0  # 1-based place among the series' extras (0 for a main chapter)
    series: Manga | None = None  # the series' lead, when the chapter is another copy's (else chapter.manga)


# Extras of one series told apart by number_sort (steps of 1/10,000 above -1); any more share the last step.
EXTRAS_SORTED = 9_999


def number_sort(chapter: Chapter, extra_position: int) -> float:
    """Komga's `numberSort`: a main chapter's number; an extra's place in (-1, 0), in reading order.

    Mihon's Komga source takes `numberSort` as the chapter number. Above -1
    it keeps the value as given (at -1 and below it reads a number out of the
    name instead, "Side Story 19" -> 19); below 0 the chapter counts as one
    without a recognised number, which tracking skips: reading it sends no
    `lastBookNumberSortRead`, and a tracker's count never marks it read. So
    an extra never shares a number with a main chapter, and reading side
    story 19 never marks chapter 19 read.
    """
    if chapter.kind == CHAPTER:
        return float(chapter.number)
    return -1 + min(extra_position, EXTRAS_SORTED) / (EXTRAS_SORTED + 1)


def read_status(book: Book) -> str:
    if book.progress is None or (not book.progress.completed and book.progress.last_page == 0):
        return "UNREAD"
    return "READ" if book.progress.completed else "IN_PROGRESS"


def media_status(chapter: Chapter) -> str:
    return media_status_of(chapter.sync_state)


def media_status_of(sync_state: str) -> str:
    return "READY" if sync_state == Chapter.SyncState.DONE else "UNKNOWN"


def series_books(user: Any, lead: Manga, wanted: BookFilter) -> list[Book]:
    """The series' shown chapters as books, numbered by position, filtered and sorted as asked.

    Three queries for a series of one manga, as before series; a merged series' union costs three more.
    """
    if wanted.deleted is True:
        return []
    chapters = list(
        shown_chapters(lead)
        .select_related("manga")
        .annotate(stored_pages=stored_pages(), stored_bytes=stored_bytes())
        .order_by(*READING_ORDER)
    )
    progress = progress_by_chapter(user, [c.id for c in chapters])
    main = sum(1 for c in chapters if c.kind == CHAPTER)  # READING_ORDER puts every extra after them
    books = [Book(c, n, progress.get(c.id), max(n - main, 0), lead) for n, c in enumerate(chapters, start=1)]
    if wanted.media_statuses:
        books = [b for b in books if media_status(b.chapter) in wanted.media_statuses]
    if wanted.read_statuses:
        books = [b for b in books if read_status(b) in wanted.read_statuses]
    for sort in reversed(wanted.sort):
        if sort.key in ("createdDate", "created"):
            books.sort(key=lambda b: b.chapter.created_at, reverse=sort.descending)
        elif sort.key in ("lastModifiedDate", "lastModified"):
            books.sort(key=lambda b: b.chapter.updated_at, reverse=sort.descending)
        else:
            books.sort(key=lambda b: b.position, reverse=sort.descending)
    return books


@dataclass(frozen=True)
class _Placed:
    """A chapter's sort keys and its place in the series: what ordering and filtering a page of books needs."""

    id: Any
    position: int
    created_at: Any
    updated_at: Any
    sync_state: str
    kind: str


def series_books_page(
    user: Any, lead: Manga, wanted: BookFilter, offset: int, size: int | None
) -> tuple[list[Book], int]:
    """One page of `series_books` and how many books match, loading only the page's chapters in full.

    The series' chapters are placed and sorted by their keys alone (a 2,000-chapter series: 2,000 narrow
    rows); the page's chapters are then read with their page counts, sizes and progress (three queries).
    A read-status filter needs every chapter's progress, and takes `series_books` whole.
    """
    if wanted.read_statuses or wanted.deleted is True:
        books = series_books(user, lead, wanted)
        return (books if size is None else books[offset : offset + size]), len(books)
    keys = shown_chapters(lead).order_by(*READING_ORDER)
    placed = [
        _Placed(key, n, created, updated, state, kind)
        for n, (key, created, updated, state, kind) in enumerate(
            keys.values_list("id", "created_at", "updated_at", "sync_state", "kind"), start=1
        )
    ]
    main = sum(1 for p in placed if p.kind == CHAPTER)  # READING_ORDER puts every extra after them
    if wanted.media_statuses:
        placed = [p for p in placed if media_status_of(p.sync_state) in wanted.media_statuses]
    for sort in reversed(wanted.sort):
        if sort.key in ("createdDate", "created"):
            placed.sort(key=lambda p: p.created_at, reverse=sort.descending)
        elif sort.key in ("lastModifiedDate", "lastModified"):
            placed.sort(key=lambda p: p.updated_at, reverse=sort.descending)
        else:
            placed.sort(key=lambda p: p.position, reverse=sort.descending)
    shown = placed if size is None else placed[offset : offset + size]
    chapters = {c.id: c for c in book_rows().filter(pk__in=[p.id for p in shown])}
    progress = progress_by_chapter(user, [p.id for p in shown])
    books = [
        Book(chapters[p.id], p.position, progress.get(p.id), max(p.position - main, 0), lead)
        for p in shown
        if p.id in chapters
    ]
    return books, len(placed)


def one_book(user: Any, chapter_id: Any) -> Book | None:
    """A live chapter as a book of its series, any copy's: numbered where its chapter key stands in the series."""
    chapter = book_rows().filter(pk=chapter_id, dropped_at__isnull=True).first()
    if chapter is None:
        return None
    progress = ReadProgress.objects.filter(user_id=user.pk, chapter=chapter).first()
    if not is_merged(chapter.manga):
        earlier = Chapter.objects.filter(manga_id=chapter.manga_id, dropped_at__isnull=True).filter(before(chapter))
        counts = earlier.aggregate(all=Count("pk"), extras=Count("pk", filter=Q(kind=EXTRA)))
        extra_position = counts["extras"] + 1 if chapter.kind == EXTRA else 0
        return Book(chapter, counts["all"] + 1, progress, extra_position)
    # Another copy of a shown chapter (an alternate) is numbered as the chapter shown for its key.
    shown = sorted((entry.shown for entry in chapter_union(chapter.manga.series_id)), key=reading_key)
    key = key_of(chapter)
    position = next((n for n, c in enumerate(shown, start=1) if key_of(c) == key), len(shown))
    extra_position = sum(1 for c in shown[:position] if c.kind == EXTRA) if chapter.kind == EXTRA else 0
    return Book(chapter, position, progress, extra_position, lead_of(chapter.manga))
