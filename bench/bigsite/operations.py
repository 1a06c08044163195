"""Every operation a user of a big site hits, as a named call: the workers' queue calls, the operator's
dashboard and admin, the readers' lists.

Queue calls go through `jobs.queue` (with `jobs.counts` and `jobs.housekeeping`)
and the console's backlog lists (`console.control.backlog`); the rest are
requests through Django's test client (the whole middleware, view and template
stack, no network) as a logged-in operator. An operation that writes (a lease,
an enqueue, a requeue, the reaper) runs in a transaction rolled back after the
call, so every call finds the same rows.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from hashlib import md5
from typing import Any

from bigsite.seed import LONG_MANGA_CHAPTERS, LONG_MANGA_ID, SEARCHED_MANGA, Size, row_id, searched_term

# A word in 19 % of the titles ("Dragon moon 7", "Moon dragon 70"), as a user types it: the answer grows
# with the library, the work to show its first page must not.
COMMON_WORD = "dragon"
# One manga's title end, the same answer at every size (a bare number such as "4242" also matched
# x4242 and 4242x: 1 manga at 10k, 20 at 100k, so the answer grew with the table).
SEARCH = searched_term(SEARCHED_MANGA)
SLOW_CALL_SECS = 2.0  # an operation slower than this is timed MIN_RUNS times, not --runs
MIN_RUNS = 5
LEASE = timedelta(seconds=60)


@dataclass(frozen=True)
class Operation:
    name: str
    call: Callable[[], Any]
    writes: bool = False
    # Run inside the call's transaction before the clock starts (its statements are not counted).
    setup: Callable[[], Any] | None = None


@dataclass(frozen=True)
class Timed:
    name: str
    median_ms: float
    runs: int
    queries: int


def _get(client: Any, url: str, **params: Any) -> Callable[[], Any]:
    def call() -> Any:
        response = client.get(url, params)
        assert response.status_code == 200, (url, params, response.status_code, response.content[:300])
        return response

    return call


def _post(client: Any, url: str, body: dict[str, Any]) -> Callable[[], Any]:
    def call() -> Any:
        response = client.post(url, body, content_type="application/json", HTTP_ORIGIN="http://testserver")
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return response

    return call


def operator_client() -> Any:
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(
        username="bench-operator", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    return client


def _deep_title_cursor(size: Size) -> str:
    """The OPDS /all/ cursor of the series 90 % of the way through the title order (found once, untimed)."""
    from catalog.models import Manga
    from reader.library import TitleCursor

    title, key = (
        Manga.objects.filter(leads_series=True)
        .order_by("title", "id")
        .values_list("title", "id")[int(size.mangas * 0.9)]
    )
    return TitleCursor(title, key).encode()


def _deep_latest_cursor(size: Size) -> str:
    """The `after` cursor of the series 90 % of the way down the latest-update order (found once, untimed)."""
    from catalog.models import LATEST_CHAPTER_ORDER, Manga
    from reader.library import LatestCursor

    leads = Manga.objects.filter(leads_series=True).order_by(*LATEST_CHAPTER_ORDER)
    return LatestCursor.of(leads[int(size.mangas * 0.9)]).encode()


def _last_chapters_cursor() -> str:
    """The OPDS feed's `after` cursor that opens the 2,000-chapter manga's last page (found once, untimed)."""
    from catalog import chapter_order
    from catalog.api import seek
    from catalog.models import Chapter

    keys = chapter_order.CURSOR_KEYS
    chapters = Chapter.objects.filter(manga_id=LONG_MANGA_ID).annotate(volume_order=chapter_order.VOLUME_ORDER)
    return seek.encode(chapters.order_by(*seek.order_of(keys))[LONG_MANGA_CHAPTERS - 50 - 1], keys)


def _deep_backlog_cursor(size: Size) -> str:
    """The backlog's `after` cursor of the active job 90 % of the way down the lease order (found once, untimed)."""
    from catalog.api import seek
    from console.control import backlog

    row = backlog.active_jobs()[int(size.pending * 0.9)]
    return seek.encode(row, backlog.LEASE_ORDER)


def _enqueue_with_dedup() -> Callable[[], Any]:
    """50 chapters already in flight (skipped) and 50 new ones, as a chapter sync of a busy manga enqueues."""
    from crawler.payloads import SyncChapterContent
    from jobs import queue

    def payload(chapter: uuid.UUID) -> SyncChapterContent:
        return SyncChapterContent(source_id="big", chapter_id=chapter, source_chapter_key=str(chapter))

    batch = [payload(row_id("chapter", n)) for n in range(50)] + [payload(row_id("new-chapter", n)) for n in range(50)]
    return lambda: queue.enqueue_many(batch)


def _renew_ten() -> Operation:
    """A worker's heartbeat over the 10 leases it holds (leased untimed, inside the call's transaction)."""
    from jobs import queue
    from jobs.ownership import renew_many

    held: list[Any] = []

    def lease_ten() -> None:
        held[:] = queue.lease(None, 10, LEASE)

    def renew() -> None:
        assert len(renew_many(held, LEASE)) == 10

    return Operation("renew 10 leases (heartbeat)", renew, writes=True, setup=lease_ten)


def _copy_id(copy: int, n: int) -> uuid.UUID:
    """The id the seed gives mirror copy `copy` of manga `n` (md5('copy-c-i')::uuid)."""
    return uuid.UUID(md5(f"copy-{copy}-{n}".encode()).hexdigest())


def _opds_series_rows(size: Size) -> int:
    """Untimed, kept across runs: a tag only the first mirror's copies of every 100th manga carry, and the
    operator's 300 bookmarks on mirror copies (not on the leads the feeds list)."""
    from django.contrib.auth import get_user_model

    from catalog.models import Bookmark, Manga, Tag

    tag, _ = Tag.objects.get_or_create(name="bench-copies-only")
    if size.copies < 2:
        return tag.id
    through = Manga.tags.through
    copies = [_copy_id(1, n) for n in range(100, size.mangas, 100)]  # the first 20 mangas have no copies
    through.objects.bulk_create([through(manga_id=c, tag_id=tag.id) for c in copies], ignore_conflicts=True)
    user = get_user_model().objects.get(username="bench-operator")
    marked = [_copy_id(1, n) for n in range(100, size.mangas, max(1, size.mangas // 300))][:300]
    Bookmark.objects.bulk_create([Bookmark(user=user, manga_id=c) for c in marked], ignore_conflicts=True)
    return tag.id


def _series_operations(client: Any, size: Size) -> list[Operation]:
    """The series views (docs/series.md) on a series of `size.copies` sources' copies of the searched manga."""
    from catalog import series as service
    from catalog.models import Chapter, Series
    from console.status.series_sources import series_sources
    from crawler import series_downloads

    series_id = row_id("manga", SEARCHED_MANGA)
    other_id = row_id("manga", SEARCHED_MANGA + 1)
    chapter = Chapter.objects.filter(manga_id=series_id).order_by("number").first()
    copies = list(Chapter.objects.filter(manga__series_id=series_id))
    deep_series_page = max(1, int(size.mangas * 0.9) // 50)
    library = "/api/v1/library/series"

    def merge_and_undo() -> Any:
        target, other = Series.objects.get(pk=series_id), Series.objects.get(pk=other_id)
        return service.undo_change(service.merge_series(target, [other], via="bench"), via="bench")

    def put_progress() -> Any:
        response = client.put(
            f"/api/v1/progress/{chapter.id}/", {"last_page": 0, "completed": True}, content_type="application/json"
        )
        assert response.status_code == 200, response.content[:300]
        return response

    copy_id = _copy_id(1, SEARCHED_MANGA)
    tag_id = _opds_series_rows(size)
    return [
        Operation(f"OPDS series feed, {size.copies} sources' chapters", _get(client, f"/opds/mangas/{series_id}/")),
        Operation("OPDS a copy's feed (its lead's)", _get(client, f"/opds/mangas/{copy_id}/")),
        Operation("OPDS tag feed (tag on copies only)", _get(client, f"/opds/tags/{tag_id}/")),
        Operation("OPDS bookmarks (300 on copies)", _get(client, "/opds/bookmarks/")),
        Operation("API series first page", _get(client, f"{library}/")),
        Operation("API series deep page (90 %)", _get(client, f"{library}/", page=deep_series_page)),
        Operation(f"API series, {size.copies} sources' chapters", _get(client, f"{library}/{series_id}/")),
        Operation("series suggestions list", _get(client, f"{library}/suggestions/")),
        Operation("series changes list", _get(client, f"{library}/changes/")),
        Operation("series merge + undo", merge_and_undo, writes=True),
        Operation(f"progress PUT, read in {size.copies} copies", put_progress, writes=True),
        Operation(f"web series page, {size.copies} sources", _get(client, f"/mangas/{series_id}/")),
        Operation("web library, most unread", _get(client, "/", sort="unread")),
        Operation("web library search", _get(client, "/", q=SEARCH)),
        Operation("web library search, common word", _get(client, "/", q=COMMON_WORD)),
        Operation(
            f"download choice, a series of {size.copies} sources",
            lambda: series_downloads.only_wanted(copies),
        ),
        Operation("dashboard series sources, counted afresh", lambda: series_sources(fresh=True)),
        Operation(
            "admin series page (served source per chapter)", _get(client, f"/admin/catalog/series/{series_id}/change/")
        ),
    ]


def operations(size: Size) -> list[Operation]:
    from bigsite import komga_series
    from jobs import housekeeping, queue
    from jobs.counts import queue_counts

    client = operator_client()
    deep_api_page = max(1, int(size.mangas * 0.9) // 50)
    deep_cursor = _deep_backlog_cursor(size)
    deep_latest = _deep_latest_cursor(size)  # the next link's cursor deep in the web library and /opds/latest/
    admin = "/api/v1/admin/crawler"
    deep_web_page = max(1, int(size.mangas * 0.9) // 24)  # reader.web_views.GRID_PAGE_SIZE
    long_feed_page = LONG_MANGA_CHAPTERS // 50  # the last page of the OPDS chapter feed (50 a page)
    long_books_page = LONG_MANGA_CHAPTERS // 20 - 1  # the last page of Komga's books (20 a page, 0-based)
    return [
        Operation("lease 10 (any kind)", lambda: queue.lease(None, 10, LEASE), writes=True),
        Operation(
            "lease 10, cooling source excluded",
            lambda: queue.lease(None, 10, LEASE, exclude_sources={"big"}),
            writes=True,
        ),
        Operation("lease 10 of one kind (analyze)", lambda: queue.lease(["analyze_page"], 10, LEASE), writes=True),
        Operation("enqueue 100 (50 deduplicated)", _enqueue_with_dedup(), writes=True),
        Operation("queue counts", queue_counts),
        Operation("status API", _get(client, f"{admin}/")),
        Operation("backlog first page", _get(client, f"{admin}/backlog/")),
        # A deep page by number alone is a 400 naming the cursor (catalog.api.seek.MAX_OFFSET_ROWS): by cursor only.
        Operation("backlog deep page (90 %, cursor)", _get(client, f"{admin}/backlog/", after=deep_cursor)),
        Operation("backlog deep page back (90 %, cursor)", _get(client, f"{admin}/backlog/", before=deep_cursor)),
        Operation("backlog search", _get(client, f"{admin}/backlog/", q=SEARCH)),
        Operation("history search", _get(client, f"{admin}/history/", q=SEARCH)),
        Operation("dead-job search", _get(client, f"{admin}/dead-jobs/", q=searched_term(size.dead_manga))),
        Operation(
            "requeue all 10,000 dead",
            _post(client, f"{admin}/requeue/", {"scope": "all", "confirm": True}),
            writes=True,
        ),
        Operation(
            "requeue one manga's dead (15)",
            _post(
                client,
                f"{admin}/requeue/",
                {"scope": "manga", "target": str(row_id("manga", size.dead_manga))},
            ),
            writes=True,
        ),
        Operation(
            "requeue one manga's dead (none)",
            _post(client, f"{admin}/requeue/", {"scope": "manga", "target": str(row_id("manga", SEARCHED_MANGA))}),
            writes=True,
        ),
        _renew_ten(),
        Operation("reap done (1,000 expired)", lambda: housekeeping.reap_done(7), writes=True),
        Operation("admin job list, kind filter", _get(client, "/admin/jobs/job/", kind__exact="sync_chapter_content")),
        Operation("admin job list, search", _get(client, "/admin/jobs/job/", q=SEARCH)),
        Operation("backlog search, common word", _get(client, f"{admin}/backlog/", q=COMMON_WORD)),
        Operation("history search, common word", _get(client, f"{admin}/history/", q=COMMON_WORD)),
        Operation("dead-job search, common word", _get(client, f"{admin}/dead-jobs/", q=COMMON_WORD)),
        Operation("admin job list, search, common word", _get(client, "/admin/jobs/job/", q=COMMON_WORD)),
        Operation("admin chapter list", _get(client, "/admin/catalog/chapter/")),
        Operation("API mangas first page", _get(client, "/api/v1/mangas/")),
        Operation("API mangas deep page (90 %)", _get(client, "/api/v1/mangas/", page=deep_api_page)),
        Operation("API mangas search", _get(client, "/api/v1/mangas/", q=SEARCH)),
        Operation("API mangas search, common word", _get(client, "/api/v1/mangas/", q=COMMON_WORD)),
        Operation("OPDS all first page", _get(client, "/opds/all/")),
        Operation(
            "OPDS all deep page (90 %, cursor)",
            _get(client, "/opds/all/", page=deep_api_page, after=_deep_title_cursor(size)),
        ),
        Operation("OPDS search", _get(client, "/opds/search/", q=SEARCH)),
        Operation("OPDS search, common word", _get(client, "/opds/search/", q=COMMON_WORD)),
        Operation("OPDS latest deep page (90 %)", _get(client, "/opds/latest/", page=deep_api_page)),
        Operation(
            "OPDS latest deep page (90 %, cursor)",
            _get(client, "/opds/latest/", page=deep_api_page, after=deep_latest),
        ),
        Operation("web library", _get(client, "/")),
        Operation("web library deep page (90 %)", _get(client, "/", page=deep_web_page)),
        Operation("web library deep page (90 %, cursor)", _get(client, "/", page=deep_web_page, after=deep_latest)),
        Operation("web manga, 2,000 chapters", _get(client, f"/mangas/{LONG_MANGA_ID}/")),
        Operation("API manga, 2,000 chapters", _get(client, f"/api/v1/mangas/{LONG_MANGA_ID}/")),
        Operation("OPDS manga, 2,000 chapters", _get(client, f"/opds/mangas/{LONG_MANGA_ID}/")),
        Operation(
            "OPDS manga, 2,000 chapters, last page",
            _get(client, f"/opds/mangas/{LONG_MANGA_ID}/", page=long_feed_page),
        ),
        Operation(
            "OPDS manga, 2,000 chapters, last page (cursor)",
            _get(client, f"/opds/mangas/{LONG_MANGA_ID}/", page=long_feed_page, after=_last_chapters_cursor()),
        ),
        Operation("Komga books, 2,000 chapters", _get(client, f"/api/v1/series/{LONG_MANGA_ID}/books")),
        Operation(
            "Komga books, 2,000 chapters, last page",
            _get(client, f"/api/v1/series/{LONG_MANGA_ID}/books", page=long_books_page),
        ),
        *_series_operations(client, size),
        *komga_series.operations(client, size),
    ]


def count_whole_requests() -> None:
    """Keep Django from emptying the query log when a request starts, so a request's statements can be counted."""
    from django.core.signals import request_started
    from django.db import reset_queries

    request_started.disconnect(reset_queries)


def _once(operation: Operation) -> tuple[float, int]:
    """One call: (milliseconds, SQL statements), rolled back when it writes."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()  # a full log (9,000 entries) would hide this call's statements
    with transaction.atomic():
        if operation.setup is not None:
            operation.setup()
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            operation.call()
            elapsed = (time.perf_counter() - began) * 1000
        transaction.set_rollback(True)
    return elapsed, len(queries)


def time_operation(operation: Operation, runs: int) -> Timed:
    """A warm-up call, then the median of `runs` calls.

    An operation whose warm-up took over SLOW_CALL_SECS is timed MIN_RUNS
    times, the warm-up counting as the first (caches matter little at that cost).
    """
    warm = _once(operation)
    if warm[0] > SLOW_CALL_SECS * 1000:
        runs = min(runs, MIN_RUNS)
        samples = [warm] + [_once(operation) for _ in range(runs - 1)]
    else:
        samples = [_once(operation) for _ in range(runs)]
    return Timed(operation.name, statistics.median(ms for ms, _ in samples), runs, samples[-1][1])
