"""The two worker roles built on `crawler.workers.loop`: which kinds each leases and what else it does.

- crawl: chapter downloads, manga/chapter-list syncs, metadata and reconcile
  passes, `CRAWLER_WORKERS` at once on one shared browser; schedules the
  periodic metadata pass and reaps old done jobs.
- analyze: `analyze_page` only, so it never contends with crawl jobs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from crawler import queue, runtime
from crawler import status as phases
from crawler.queue.payloads import MetadataPass
from crawler.status import StatusHandle
from crawler.workers.loop import Periodic, Worker, WorkerConfig
from crawler.workers.registry import handlers_for

logger = logging.getLogger(__name__)

SCHEDULE_KEY = runtime.METADATA_SCHEDULE_KEY
# The schedule is durable (shared by every crawl worker), but checking it is
# a query, so each worker looks at most this often.
SCHEDULE_CHECK_EVERY = timedelta(minutes=1)


def metadata_pass_due(last_enqueued_at: datetime | None, interval: timedelta, now: datetime) -> bool:
    """A pass is due when none was ever scheduled or the last one was scheduled `interval` ago."""
    return last_enqueued_at is None or now - last_enqueued_at >= interval


def enqueue_due_metadata_passes(now: datetime | None = None) -> datetime:
    """Enqueue a metadata pass per enabled source when the shared schedule says one is due.

    Several crawl workers may run this at once: the dedup key (one pass in
    flight per source) turns the loser's enqueue into `Skipped`. Returns when
    the next pass is due, for the idle phase's `next_fire`.
    """
    from catalog.models import Source

    now = now or timezone.now()
    interval = timedelta(seconds=settings.CRAWLER_METADATA_INTERVAL)
    raw = runtime.get_state(SCHEDULE_KEY)
    last = parse_datetime(raw) if isinstance(raw, str) else None
    if last is not None and not metadata_pass_due(last, interval, now):
        return last + interval
    runtime.set_state(SCHEDULE_KEY, now.isoformat())
    inserted = 0
    for source_id in Source.objects.filter(enabled=True).values_list("id", flat=True):
        if queue.enqueue(MetadataPass(source_id=source_id)).inserted:
            inserted += 1
    logger.info("scheduled metadata passes: %d enqueued", inserted)
    return now + interval


def _schedule_metadata_passes(status: StatusHandle) -> Callable[[], None]:
    def run() -> None:
        next_fire = enqueue_due_metadata_passes()
        if status.snapshot().phase.get("state") == "idle":
            status.set_phase(phases.idle(next_fire))

    return run


def reap_done_jobs() -> None:
    reaped = queue.reap_done(settings.CRAWLER_DONE_RETENTION_DAYS)
    if reaped:
        logger.info("reaped %d done job(s) older than %d days", reaped, settings.CRAWLER_DONE_RETENTION_DAYS)


def _browser_manager() -> Any:
    from crawler.sources.browser import BrowserManager

    return BrowserManager()


def crawl_worker(*, concurrency: int | None = None, schedule: bool = True, **overrides: Any) -> Worker:
    """The crawl worker. `schedule=False` leaves the periodic metadata pass to someone else (tests, the demo)."""
    from crawler.workers.handlers import CRAWL_HANDLERS

    concurrency = concurrency or settings.CRAWLER_WORKERS
    status = StatusHandle(concurrency)
    periodic = [Periodic("reap_done", timedelta(days=1), reap_done_jobs)]
    if schedule:
        periodic.append(Periodic("schedule_metadata_pass", SCHEDULE_CHECK_EVERY, _schedule_metadata_passes(status)))
    config = WorkerConfig(
        role="crawl",
        handlers=CRAWL_HANDLERS,
        concurrency=concurrency,
        # Every crawl kind talks to the source, so all of them wait out an expired session.
        session_kinds=frozenset(CRAWL_HANDLERS),
        browser_factory=_browser_manager,
        periodic=periodic,
        **overrides,
    )
    return Worker(config, status=status)


def analyze_worker(*, concurrency: int = 1, **overrides: Any) -> Worker:
    # The analysis app registers `analyze_page` from its AppConfig.ready().
    config = WorkerConfig(role="analyze", handlers=handlers_for("analyze"), concurrency=concurrency, **overrides)
    return Worker(config, status=StatusHandle(concurrency))
