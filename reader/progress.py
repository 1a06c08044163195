"""Read progress: recording it (web reader, PSE page fetches, REST API) and what it implies.

`last_page` is 1-based, the way OPDS-PSE's `pse:lastRead` counts. A page
fetch only ever moves progress forward (a client preloading page 7 and then
showing page 3 must not lose page 7); the REST API sets what the client says.

One progress per series: a chapter finished, marked unread or forgotten is
so in every copy of it the series' other sources hold (its twins: the same
chapter key, catalog.chapter_keys), so chapter 12 read from one site is
chapter 12 read in every reader, whichever copy it lists. Pages read part-way
stay with the copy read: two sites cut a chapter into different pages.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import Any

from django.db import connections, router
from django.db.models import Count, Exists, F, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from catalog.chapter_numbers import CHAPTER
from catalog.chapter_order import READING_ORDER, before
from catalog.models import Chapter, Manga, Page
from catalog.series_chapters import key_of
from reader.models import ReadProgress


def readable_chapters(manga: Manga | Any) -> QuerySet[Chapter]:
    """The manga's live, downloaded chapters in reading order, with their stored page count as `stored_pages`."""
    return (
        Chapter.objects.filter(manga=manga, dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE)
        .annotate(stored_pages=stored_pages())
        .order_by(*READING_ORDER)
    )


def stored_pages() -> Coalesce:
    """Annotation: a chapter's stored page count, a correlated subquery (no GROUP BY over joined rows)."""
    counted = (
        Page.objects.filter(chapter=OuterRef("pk")).order_by().values("chapter").annotate(n=Count("*")).values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def twins(chapters: list[Chapter]) -> list[Chapter]:
    """The other sources' copies of `chapters` in their series (same chapter key), with `stored_pages`; 2 queries."""
    if not chapters:
        return []
    mine = {c.pk for c in chapters}
    series_of = dict(Manga.objects.filter(pk__in={c.manga_id for c in chapters}).values_list("pk", "series_id"))
    # Per chapter key, the mangas whose copy is among `chapters`: another row of one of those is no twin. The
    # chapters may span several copies of a series (a merged series' shown chapters): each key's twins are
    # the copies of the other mangas.
    given: dict[tuple[Any, Any], set[Any]] = {}
    for c in chapters:
        given.setdefault((series_of[c.manga_id], key_of(c)), set()).add(c.manga_id)
    candidates = (
        Chapter.objects.filter(manga__series_id__in=set(series_of.values()), kind__in={c.kind for c in chapters})
        .exclude(pk__in=mine)
        .annotate(stored_pages=stored_pages(), series_id=F("manga__series_id"))
    )
    return [c for c in candidates if c.manga_id not in given.get((c.series_id, key_of(c)), {c.manga_id})]


def stored_page_count(chapter: Chapter) -> int:
    return Page.objects.filter(chapter=chapter).count()


def record_page_read(*, user: Any, chapter: Chapter, page_number: int, page_count: int) -> None:
    """Move `user`'s progress in `chapter` forward to 1-based `page_number` (never backwards), in one statement.

    A PSE client records a page with every page it fetches, so this write is
    on each of those requests: one upsert composed once (the row created at
    `page_number`, or moved forward when it is behind), instead of a read and
    then a compare-and-set update. A concurrent fetch of a later page still
    wins whichever commits first: the update applies only while the row is behind.
    A page that completes the chapter completes its copies from the series' other
    sources too (`twins`).
    """
    connection = connections[router.db_for_write(ReadProgress)]
    completed = page_number >= page_count
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            _forward_statement(connection.vendor, connection.alias),
            [user.pk, _db_value("chapter", chapter.pk, connection), page_number, completed, now],
        )
        moved = cursor.rowcount  # 1 when the row was created or moved forward, 0 when it was already ahead
    if moved and completed:
        _complete(user, twins([chapter]))


def _db_value(field: str, value: Any, connection: Any) -> Any:
    return ReadProgress._meta.get_field(field).get_db_prep_value(value, connection)  # type: ignore[union-attr]


@cache
def _forward_statement(vendor: str, alias: str) -> str:
    """INSERT ... ON CONFLICT (user, chapter) DO UPDATE ... WHERE behind: PostgreSQL and SQLite (3.24+) alike."""
    q = connections[alias].ops.quote_name
    table = q(ReadProgress._meta.db_table)
    user, chapter, last_page, completed, updated_at = (
        q(ReadProgress._meta.get_field(name).column)
        for name in ("user", "chapter", "last_page", "completed", "updated_at")
    )
    return (
        f"INSERT INTO {table} ({user}, {chapter}, {last_page}, {completed}, {updated_at})"
        f" VALUES (%s, %s, %s, %s, %s) ON CONFLICT ({user}, {chapter}) DO UPDATE SET"
        f" {last_page} = excluded.{last_page}, {completed} = {table}.{completed} OR excluded.{completed},"
        f" {updated_at} = excluded.{updated_at} WHERE {table}.{last_page} < excluded.{last_page}"
    )


def set_progress(*, user: Any, chapter: Chapter, last_page: int, completed: bool) -> ReadProgress:
    """Store exactly what the client says (the REST API's PUT)."""
    progress, _ = ReadProgress.objects.update_or_create(
        user=user, chapter=chapter, defaults={"last_page": last_page, "completed": completed}
    )
    if completed:
        _complete(user, twins([chapter]))
    else:
        ReadProgress.objects.filter(user=user, chapter__in=twins([chapter]), completed=True).update(
            completed=False, updated_at=timezone.now()
        )
    return progress


def progress_by_chapter(user: Any, chapter_ids: list[Any]) -> dict[Any, ReadProgress]:
    """`user`'s progress rows for these chapters, keyed by chapter id (one query)."""
    if not getattr(user, "is_authenticated", False) or not chapter_ids:
        return {}
    rows = ReadProgress.objects.filter(user=user, chapter_id__in=chapter_ids)
    return {row.chapter_id: row for row in rows}


def continue_chapter(user: Any, manga: Manga) -> tuple[Chapter, int] | None:
    """The first readable chapter `user` has not completed, and the 1-based page to resume at."""
    done = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
    chapter = readable_chapters(manga).exclude(Exists(done)).first()
    if chapter is None:
        return None
    progress = ReadProgress.objects.filter(user=user, chapter=chapter).first()
    resume = progress.last_page if progress and progress.last_page else 1
    return chapter, min(max(resume, 1), max(chapter.stored_pages, 1))


def has_unread(user: Any) -> Exists:
    """Annotation for a Manga queryset: it has a readable chapter `user` has not completed."""
    done = ReadProgress.objects.filter(user=user, chapter=OuterRef("pk"), completed=True)
    unread = Chapter.objects.filter(
        manga=OuterRef("pk"), dropped_at__isnull=True, sync_state=Chapter.SyncState.DONE
    ).exclude(Exists(done))
    return Exists(unread)


def forget_progress(*, user: Any, chapter: Chapter) -> None:
    """Back to unread (Komga's DELETE read-progress)."""
    ReadProgress.objects.filter(user=user, chapter__in=[chapter, *twins([chapter])]).delete()


def mark_read_through(*, user: Any, manga: Manga, number: Decimal) -> int:
    """Every readable main chapter of `manga` numbered up to `number` completed, at its last page (Mihon's tracker).

    Extras are left alone: their numbers count extras, so side story 19 read never marks chapter 19, nor the
    other way round. Four queries whatever the chapter count; returns how many chapters it marked.
    """
    return _complete_with_twins(user, list(readable_chapters(manga).filter(kind=CHAPTER, number__lte=number)))


def mark_read_through_chapter(*, user: Any, chapter: Chapter, among: QuerySet[Chapter] | None = None) -> int:
    """`chapter` and every readable chapter of its kind before it in reading order completed (the web reader's
    "read up to here"): main chapters up to a main chapter, extras up to an extra, never one for the other.

    `among`: the readable chapters to mark from, with `stored_pages` (default: `chapter`'s manga's; a series'
    page passes the chapters it shows, from every source)."""
    readable = readable_chapters(chapter.manga_id) if among is None else among
    earlier = readable.filter(before(chapter), kind=chapter.kind).exclude(pk=chapter.pk)
    return _complete_with_twins(user, [*earlier, *readable_chapters(chapter.manga_id).filter(pk=chapter.pk)])


def mark_read(*, user: Any, chapters: list[Chapter]) -> int:
    """`chapters` (carrying `stored_pages`) completed, with their copies in the series' other sources; how many
    of `chapters` changed (a reader's "mark the series read" or "read up to here" over a series' shown chapters)."""
    return _complete_with_twins(user, chapters)


def _complete_with_twins(user: Any, chapters: list[Chapter]) -> int:
    """`chapters` and their twins completed; how many of `chapters` themselves changed."""
    changed = _complete(user, chapters)
    _complete(user, twins(chapters))
    return changed


def _complete(user: Any, chapters: list[Chapter]) -> int:
    """Each of `chapters` (carrying `stored_pages`) completed at its last page; how many changed."""
    if not chapters:
        return 0
    existing = {row.chapter_id: row for row in ReadProgress.objects.filter(user=user, chapter__in=chapters)}
    now = timezone.now()
    changed, created = [], []
    for chapter in chapters:
        row = existing.get(chapter.id)
        if row is None:
            created.append(ReadProgress(user=user, chapter=chapter, last_page=chapter.stored_pages, completed=True))
        elif not row.completed:
            row.completed, row.last_page, row.updated_at = True, chapter.stored_pages, now
            changed.append(row)
    ReadProgress.objects.bulk_create(created, ignore_conflicts=True)
    ReadProgress.objects.bulk_update(changed, ["completed", "last_page", "updated_at"])
    return len(created) + len(changed)
