"""The library page's rows: series with their reading counts, sorted and filtered, and the shelves above the grid.

Each series is one card, its lead's (catalog.series_leads): a series found
on several sites is listed once. A grid page is a few queries whatever its
size: the page of leads (sorted and filtered by indexed columns, no counts,
so an OFFSET skips bare rows), then the counts of those 24 alone
(`attach_counts`): SQL for the series of one manga, and one query over the
chapters of the page's series grouping several (reader.series_counts).
Sorting by unread chapters needs every series' count, so that sort
aggregates the chapters (and the reader's own progress rows) in one grouped
join instead of a subquery per series. A shelf is one query, its 12 rows'
counts as correlated subqueries, plus the same series counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, F, FilteredRelation, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from catalog.models import LATEST_CHAPTER_ORDER, Bookmark, Chapter, Manga, MangaSource
from catalog.search import found_through_copies, series_matches, title_search
from catalog.series_leads import leads, merged_series
from reader.library import (
    MANGA_FIELDS,
    LatestCursor,
    Paged,
    TitleCursor,
    paged,
    paged_by_keys,
    paged_by_latest,
    paged_by_title,
)
from reader.library_query import LibraryQuery
from reader.models import ReadProgress
from reader.naming import chapter_title
from reader.series_counts import set_series_counts

SHELF_SIZE = 12
CARD_FIELDS = (*MANGA_FIELDS, "series_id")
ORDERS: dict[str, tuple[Any, ...]] = {
    "updated": LATEST_CHAPTER_ORDER,
    "title": ("title", "id"),
    "added": ("-created_at", "-id"),
    "unread": (F("unread_count").desc(), *LATEST_CHAPTER_ORDER),
}


def _readable() -> QuerySet[Chapter]:
    return Chapter.objects.filter(manga=OuterRef("pk"), dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE)


def _count(queryset: QuerySet[Any]) -> Coalesce:
    counted = queryset.order_by().values("manga").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def with_reading_counts(mangas: QuerySet[Manga], user: Any) -> QuerySet[Manga]:
    """Annotate `chapter_count` (readable ones), `read_count` (those `user` completed) and `unread_count`."""
    mangas = mangas.annotate(chapter_count=_count(_readable()))
    if getattr(user, "is_authenticated", False):
        done = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
        mangas = mangas.annotate(read_count=_count(_readable().filter(Exists(done))))
    else:
        mangas = mangas.annotate(read_count=Value(0, output_field=IntegerField()))
    return mangas.annotate(unread_count=F("chapter_count") - F("read_count"))


def with_counts_aggregated(mangas: QuerySet[Manga], user: Any, *, across_series: bool = False) -> QuerySet[Manga]:
    """The same three counts as `with_reading_counts`, from one grouped join: for sorting the whole library by them.

    `across_series` counts the chapters of every manga of each one's series (for ranking leads): a chapter is
    downloaded from one source and finished in every copy, so each is counted about once.
    """
    path = "series__mangas__chapters" if across_series else "chapters"
    readable = Q(**{f"{path}__dropped_at__isnull": True, f"{path}__sync_state": Chapter.SyncState.DONE})
    if getattr(user, "is_authenticated", False):
        mine = Q(**{f"{path}__read_progress__user": user, f"{path}__read_progress__completed": True})
        mangas = mangas.annotate(
            finished=FilteredRelation(f"{path}__read_progress", condition=mine),
            chapter_count=Count(path, filter=readable),
            read_count=Count("finished", filter=readable),
        )
    else:
        mangas = mangas.annotate(
            chapter_count=Count(path, filter=readable), read_count=Value(0, output_field=IntegerField())
        )
    return mangas.annotate(unread_count=F("chapter_count") - F("read_count"))


def library_rows(query: LibraryQuery, user: Any) -> QuerySet[Manga]:
    """The grid's series for `query` (their leads, one card each): filtered, then ranked by search or in the
    chosen order. A series matches a tag, a source or a title when one of its mangas does.

    Only the unread sort carries counts; give the other pages' rows theirs with `attach_counts`.
    """
    rows = leads().only(*CARD_FIELDS)
    if query.tag:
        tagged = Manga.tags.through.objects.filter(manga__series_id=OuterRef("series_id"), tag__name=query.tag)
        rows = rows.filter(Exists(tagged))
    if query.status:
        rows = rows.filter(status=query.status)
    if query.source:
        listed = MangaSource.objects.filter(
            manga__series_id=OuterRef("series_id"), source_id=query.source, dropped_at__isnull=True
        )
        rows = rows.filter(Exists(listed))
    if query.q and not query.sort_chosen:
        return rows  # ranked a page at a time by `search_page`
    if query.q:
        rows = series_matches(rows, query.q)
    if query.sort == "unread":
        rows = with_counts_aggregated(rows, user, across_series=True)
    return rows.order_by(*ORDERS[query.sort])


def attach_counts(mangas: list[Manga], user: Any) -> list[Manga]:
    """Set `chapter_count`, `read_count` and `unread_count` on each of `mangas`: one query for the series of one
    manga, and for those grouping several (each chapter key once) two more for the whole list."""
    missing = [manga for manga in mangas if not hasattr(manga, "unread_count")]
    set_series_counts(mangas, user)
    missing = [manga for manga in missing if not hasattr(manga, "unread_count")]
    if missing:
        counted = with_reading_counts(Manga.objects.filter(pk__in=[m.pk for m in missing]), user)
        counts = {row["pk"]: row for row in counted.values("pk", "chapter_count", "read_count", "unread_count")}
        for manga in missing:
            row = counts.get(manga.pk, {"chapter_count": 0, "read_count": 0, "unread_count": 0})
            manga.chapter_count, manga.read_count, manga.unread_count = (  # type: ignore[attr-defined]
                row["chapter_count"],
                row["read_count"],
                row["unread_count"],
            )
    return mangas


@dataclass(frozen=True)
class ContinueItem:
    manga: Manga
    chapter: Chapter
    page: int
    title: str


def continue_reading(user: Any, *, size: int = SHELF_SIZE) -> list[ContinueItem]:
    """`user`'s chapters begun and not finished, latest first, one per series (shown as its lead), each at the
    page they left."""
    if not getattr(user, "is_authenticated", False):
        return []
    rows = (
        ReadProgress.objects.filter(user=user, completed=False, last_page__gt=0, chapter__dropped_at__isnull=True)
        .select_related("chapter", "chapter__manga")
        .only(
            "last_page",
            "chapter__id",
            "chapter__kind",
            "chapter__volume",
            "chapter__number",
            "chapter__title",
            "chapter__page_count",
            "chapter__manga__id",
            "chapter__manga__series_id",
        )
        .order_by("-updated_at")[: size * 4]  # room for several chapters of one series
    )
    latest: dict[Any, ReadProgress] = {}
    for row in rows:
        if row.chapter.manga.series_id not in latest and len(latest) < size:
            latest[row.chapter.manga.series_id] = row
    shown = {m.series_id: m for m in leads().filter(series_id__in=list(latest)).only(*CARD_FIELDS)}
    return [
        ContinueItem(shown[series], row.chapter, row.last_page, chapter_title(row.chapter))
        for series, row in latest.items()
        if series in shown
    ]


def recently_updated(user: Any, *, size: int = SHELF_SIZE) -> list[Manga]:
    rows = leads().only(*CARD_FIELDS).filter(latest_chapter_at__isnull=False)
    found = list(with_reading_counts(rows, user).order_by(*LATEST_CHAPTER_ORDER)[:size])
    set_series_counts(found, user)
    return found


def latest_first(manga: Manga) -> tuple[Any, ...]:
    """LATEST_CHAPTER_ORDER as a sort key, for rows counted apart and put back together."""
    stamp = manga.latest_chapter_at
    return (stamp is None, -(stamp.timestamp() if stamp else 0), -manga.created_at.timestamp(), -manga.pk.int)


def bookmarks_with_new_chapters(user: Any, *, size: int = SHELF_SIZE) -> list[Manga]:
    """`user`'s bookmarked series (a bookmark on any of a series' mangas) that have readable chapters they have
    not finished, latest chapter first, each shown as its lead."""
    if not getattr(user, "is_authenticated", False):
        return []
    bookmarked = Bookmark.objects.filter(user=user, manga__series_id=OuterRef("series_id"))
    rows = leads().only(*CARD_FIELDS).filter(Exists(bookmarked))
    merged = merged_series(rows.values_list("series_id", flat=True))
    # Every single-manga bookmark's counts decide whether it is on the shelf: one grouped join, not subqueries
    # per bookmark; the series grouping several mangas (few) are counted by chapter key.
    single = with_counts_aggregated(rows.exclude(series_id__in=merged), user)
    found = list(single.filter(unread_count__gt=0).order_by(*LATEST_CHAPTER_ORDER)[:size])
    if merged:
        grouped = list(rows.filter(series_id__in=merged))
        set_series_counts(grouped, user)
        found = sorted([*found, *(m for m in grouped if m.unread_count > 0)], key=latest_first)[:size]
    return found


ADDED_KEYS = (("created_at", True), ("id", True))  # ORDERS["added"] as seek keys


def library_page(rows: QuerySet[Manga], query: LibraryQuery, size: int) -> Paged[Manga]:
    """The grid's page of `rows` (ordered by `library_rows`): sought from the query's cursor in the orders that
    have one (updated, title, added), so a deep page costs what the first does; by number in the others (best
    match, most unread: computed orders) and when no cursor is given. BadCursor for a cursor we did not write."""
    if query.q and not query.sort_chosen:
        return search_page(rows, query.q, query.page, size)
    if query.sort not in ("updated", "title", "added"):
        return paged(rows, query.page, size)
    if query.sort == "updated":
        after, before = (LatestCursor.decode(token) if token else None for token in (query.after, query.before))
        return paged_by_latest(rows, query.page, after=after, before=before, size=size)
    if query.sort == "title":
        cursors = (TitleCursor.decode(token) if token else None for token in (query.after, query.before))
        title_after, title_before = cursors
        return paged_by_title(rows, query.page, after=title_after, before=title_before, size=size)
    return paged_by_keys(rows, query.page, ADDED_KEYS, after=query.after, before=query.before, size=size)


def search_page(leads: QuerySet[Manga], q: str, page: int, size: int) -> Paged[Manga]:
    """Page `page` of a search's series, best first: the leads matching `q` on their own titles, ranked as
    `title_search` ranks them (its index walks keep a common word's first pages cheap), then the series found
    through another copy's titles, latest first."""
    own = title_search(leads, q)
    start = (page - 1) * size
    found = paged(own, page, size)
    if found.has_next:
        return found
    # The page reaches past the leads' own matches: the series found through their copies follow them.
    own_total = start + len(found.rows) if found.rows else own.count()
    skip = max(0, start - own_total)
    wanted = size + 1 - len(found.rows)
    more = list(found_through_copies(leads, q).only(*CARD_FIELDS)[skip : skip + wanted])
    rows = [*found.rows, *more]
    return Paged(rows[:size], page, len(rows) > size)
