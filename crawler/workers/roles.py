"""The crawl worker role on `jobs.worker.loop`: its hooks, its periodic duties and its builder.

The crawl role runs the kinds `CrawlerConfig.ready()` registers (chapter
downloads, manga/chapter-list syncs, metadata and reconcile passes),
`JOBS_WORKERS` at once on one shared browser; it schedules the periodic
metadata pass and reaps old done jobs. `PublishedStatus` (the dashboard's
status row) is shared with the analyze role (`analysis.worker`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from crawler import state_store
from crawler.passes.disk_guard import storage_paused
from crawler.payloads import MetadataPass, SyncChapterContent
from crawler.politeness import limiter
from crawler.politeness.slots import busy_sources
from jobs import housekeeping, queue
from jobs.lease import Lease
from jobs.worker.loop import Periodic, Worker, WorkerConfig
from jobs.worker.status import phases
from jobs.worker.status.handle import StatusHandle
from jobs.worker.status.publish import PublishedStatus

logger = logging.getLogger(__name__)

SCHEDULE_KEY = state_store.METADATA_SCHEDULE_KEY
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
    raw = state_store.get_state(SCHEDULE_KEY)
    last = parse_datetime(raw) if isinstance(raw, str) else None
    if last is not None and not metadata_pass_due(last, interval, now):
        return last + interval
    state_store.set_state(SCHEDULE_KEY, now.isoformat())
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
    reaped = housekeeping.reap_done(settings.JOBS_DONE_RETENTION_DAYS)
    if reaped:
        logger.info("reaped %d done job(s) older than %d days", reaped, settings.JOBS_DONE_RETENTION_DAYS)


def _browser_manager() -> Any:
    from sources.browser import BrowserManager

    return BrowserManager()


class CrawlHooks(PublishedStatus):
    """The crawl role: one shared browser, per-source session pauses and cooldowns, browser restarts, the disk guard."""

    def __init__(self, status: StatusHandle, *, browser_factory: Callable[[], Any] | None = _browser_manager) -> None:
        super().__init__(status)
        # Builds the shared browser on first use; None for workers that never need one (tests).
        self.browser_factory = browser_factory
        self.browser: Any = None
        self._browser_lock = threading.Lock()
        self.paused_sources: set[str] = set()
        self.cooling_sources: set[str] = set()
        # Why page downloads wait (free disk under CRAWLER_MIN_FREE_DISK), or None: crawler.passes.disk_guard.
        self.storage_paused: str | None = None
        self._restart_generation: int | None = None

    def context(self, lease: Lease, status: Any, cancel: threading.Event) -> Any:
        from crawler.workers.handlers import JobContext

        return JobContext(lease=lease, status=status, cancel=cancel, browser=self.shared_browser())

    def shared_browser(self) -> Any:
        """The process's one browser manager, built on first use (it launches Chromium lazily itself)."""
        if self.browser_factory is None:
            return None
        with self._browser_lock:
            if self.browser is None:
                self.browser = self.browser_factory()
            return self.browser

    def extra_flags(self) -> dict[str, Any]:
        browser = self.browser
        return {"browser": getattr(browser, "state", None)} if browser is not None else {}

    def exclusions(self) -> set[str]:
        """Sources whose session expired, and those cooling down after a 429/503 (any worker's Retry-After)."""
        return self.paused_sources | self.cooling_sources

    def momentary_exclusions(self) -> set[str]:
        """Sources one of this process's jobs just gave back as busy (`SourceBusy`): the threads go to others."""
        return busy_sources()

    def leasable_kinds(self, kinds: list[str]) -> list[str]:
        """Every kind, less page downloads while the disk is under its floor."""
        if self.storage_paused:
            return [kind for kind in kinds if kind != SyncChapterContent.kind]
        return kinds

    def on_held(self, lease: Lease, error: BaseException) -> None:
        """The disk is under its floor (or a write found it full): page downloads wait until there is room."""
        self._set_storage_paused(str(error))

    def on_paused(self, lease: Lease, error: BaseException) -> None:
        """The login wall: flag the source's session expired (sticky, in every process) until an operator refreshes it."""
        source_id = getattr(lease.payload, "source_id", None)
        if source_id:
            state_store.set_session_expired(source_id, True)

    def refresh_control(self) -> None:
        """Pick up what operators changed in any process: session refreshes, cooldowns, browser restarts; the disk's room."""
        self._set_storage_paused(storage_paused())
        self._set_paused(set(state_store.expired_sessions()))
        self.cooling_sources = limiter.cooling_sources()
        generation = state_store.browser_restart_generation()
        if self._restart_generation is None or self.browser_factory is None:
            self._restart_generation = generation  # the first read: requests made before this process started
            return
        if generation == self._restart_generation:
            return
        self._restart_generation = generation
        browser = self.browser
        if browser is None or browser.state == "idle":
            logger.info("browser restart requested (generation %d); no browser launched here", generation)
            return
        logger.info("browser restart requested (generation %d); restarting", generation)
        # The restart drains the browser's current users first; on its own
        # thread it does not hold up settling and leasing meanwhile.
        threading.Thread(target=self._restart_browser, args=(browser,), name="browser-restart", daemon=True).start()

    @staticmethod
    def _restart_browser(browser: Any) -> None:
        try:
            browser.restart()
        except Exception:  # reported; the browser manager retries on its next use
            logger.warning("browser restart failed", exc_info=True)
        finally:
            connection.close()

    def _set_paused(self, sources: set[str]) -> None:
        if sources == self.paused_sources:
            return
        resumed = self.paused_sources - sources
        if resumed:
            logger.info("session refreshed for %s; resuming session work", ",".join(sorted(resumed)))
        self.paused_sources = sources
        self.status.set_flag("session_expired", sorted(sources))

    def _set_storage_paused(self, reason: str | None) -> None:
        if reason == self.storage_paused:
            return
        if reason is None:
            logger.info("disk has room again; resuming page downloads")
        elif self.storage_paused is None:
            logger.warning("%s", reason)
        self.storage_paused = reason
        self.status.set_flag("storage_paused", reason)

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()


def crawl_worker(
    *,
    concurrency: int | None = None,
    schedule: bool = True,
    browser_factory: Callable[[], Any] | None = _browser_manager,
    **overrides: Any,
) -> Worker:
    """The crawl worker. `schedule=False` leaves the periodic metadata pass to someone else (tests, the demo)."""
    concurrency = concurrency or settings.JOBS_WORKERS
    status = StatusHandle(concurrency)
    periodic = [Periodic("reap_done", timedelta(days=1), reap_done_jobs)]
    if schedule:
        periodic.append(Periodic("schedule_metadata_pass", SCHEDULE_CHECK_EVERY, _schedule_metadata_passes(status)))
    config = WorkerConfig.for_role(
        "crawl",
        concurrency=concurrency,
        hooks=CrawlHooks(status, browser_factory=browser_factory),
        periodic=periodic,
        **overrides,
    )
    return Worker(config, status=status)
