"""The metadata pass: one newest-first walker over a source's list pages.

For each ref it runs `process_manga_ref` (the same function the `sync_manga`
job runs) and stops at the first manga whose metadata is Unchanged AND whose
chapter sync found zero new chapters: everything older was caught up by an
earlier pass. That early stop is only trusted when the previous pass exited
cleanly. The per-source recovery flag is set false when a pass starts and true
only on a clean exit, so a crashed pass (no shutdown code runs on kill -9)
leaves it false and the next pass walks the whole catalog, recovering whatever
the crash missed.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from catalog.models import Manga, Source
from crawler import state_store
from crawler.factory import get_source
from crawler.passes.pipeline import CoverOutcome, MangaOutcome, MetadataOutcome, fetch_cover, process_manga_ref
from jobs.errors import JobCancelled
from jobs.worker.status import phases
from jobs.worker.status.handle import StatusHandle
from sources.base import Source as SourceAdapter
from sources.base import SourceMangaRef
from sources.errors import RetryLater, SessionExpired, SourceConfigError

if TYPE_CHECKING:
    from sources.browser import BrowserManager

logger = logging.getLogger(__name__)

# Covers retried per pass: a broken cover host must not turn every pass into
# a long crawl of failing image fetches.
COVER_BACKFILL_BATCH = 100


@dataclass
class MetadataStats:
    discovered: int = 0
    upserted: int = 0
    covers_fetched: int = 0
    mangas_failed: int = 0
    # Settings that matched nothing (SourceConfigError): each named in a warning, never a silent 0.
    config_errors: int = 0
    dates_unparsed: int = 0
    # Chapters the source lists but serves no pages for (MangaDex: hosted elsewhere, or unavailable): skipped.
    chapters_external: int = 0
    chapters_unavailable: int = 0
    stopped_early: bool = False
    walked_to_completion: bool = False
    aborted: bool = False


# --- pure decisions -----------------------------------------------------------------------


def should_stop(outcome: MetadataOutcome, new_chapters: int, last_run_clean: bool) -> bool:
    """Stop the walk at this manga: nothing changed, no new chapters, and the last run was clean.

    After a crashed run the mangas past its crash point may be stale although
    this one is caught up, so the early stop is off until a clean exit.
    """
    return last_run_clean and outcome is MetadataOutcome.UNCHANGED and new_chapters == 0


def should_mark_clean_exit(walked_to_completion: bool, hit_stop_condition: bool) -> bool:
    """A pass exited cleanly when it reached the end of the list or its stop condition.

    There is deliberately no `hit_limit` parameter: a caller-imposed cap
    leaves the catalog past the cap unvisited, so it must never count as clean.
    """
    return walked_to_completion or hit_stop_condition


def should_abort_pass(consecutive_failures: int, max_failures: int) -> bool:
    """Give up after `max_failures` mangas in a row failed (the source is likely down).

    A non-positive `max_failures` disables the abort.
    """
    return max_failures > 0 and consecutive_failures >= max_failures


# --- the pass --------------------------------------------------------------------------------


def run_metadata_pass(
    source_row: Source,
    *,
    status: StatusHandle,
    browser: BrowserManager | None = None,
    limit: int | None = None,
    cancel: threading.Event | None = None,
) -> MetadataStats:
    """Walk `source_row` newest first, process each manga, back-fill failed covers.

    `limit` caps the mangas visited (never a clean exit). `SessionExpired` and
    `JobCancelled` propagate and leave the recovery flag false.
    """
    cancel = cancel or threading.Event()
    source = get_source(source_row, browser=browser, cancel=cancel)
    try:
        return _run(source_row, source, status=status, limit=limit, cancel=cancel)
    finally:
        status.set_phase(phases.idle())
        source.close()


def _run(
    source_row: Source, source: SourceAdapter, *, status: StatusHandle, limit: int | None, cancel: threading.Event
) -> MetadataStats:
    clean_before = state_store.last_run_clean(source_row.id)
    state_store.set_last_run_clean(source_row.id, False)
    stats = MetadataStats()
    attempted_covers: set[object] = set()
    try:
        _walk(
            source_row, source, stats, attempted_covers, status=status, limit=limit, cancel=cancel, clean=clean_before
        )
    except SourceConfigError as exc:
        # The list itself is misconfigured: record the summary, then dead-letter the pass with the reason.
        logger.warning("metadata pass source=%s: %s", source_row.id, exc)
        stats.config_errors += 1
        _record(source_row, stats, status, source)
        raise
    if not stats.aborted:
        _backfill_covers(source_row, source, stats, attempted_covers, status=status, cancel=cancel)
    if should_mark_clean_exit(stats.walked_to_completion, stats.stopped_early):
        state_store.set_last_run_clean(source_row.id, True)
    _record(source_row, stats, status, source)
    return stats


def _walk(
    source_row: Source,
    source: SourceAdapter,
    stats: MetadataStats,
    attempted_covers: set[object],
    *,
    status: StatusHandle,
    limit: int | None,
    cancel: threading.Event,
    clean: bool,
) -> None:
    max_failures = settings.CRAWLER_METADATA_MAX_CONSECUTIVE_FAILURES
    consecutive_failures = 0
    # List drift can show one manga on two pages; the second sighting would
    # look Unchanged and trip the early stop, so each key is visited once.
    seen: set[str] = set()
    page = 1
    while True:
        _check(cancel)
        status.set_phase(phases.walking_list())
        refs, has_next = source.list_page(page)
        fresh = unseen_refs(refs, seen)
        if has_next and not fresh:
            # A page with nothing new would repeat forever (a list URL that
            # ignores its page number, anchors lost to markup drift). Not a
            # clean exit: the next pass walks again instead of trusting this one.
            logger.warning("metadata pass source=%s: list page %d brought no new manga; stopping", source_row.id, page)
            return
        for ref in fresh:
            if limit is not None and stats.discovered >= limit:
                return
            _check(cancel)
            stats.discovered += 1
            status.set_phase(phases.fetching_metadata(stats.discovered, limit, ref.title))
            outcome = _process_one(source_row, source, ref, status)
            if not isinstance(outcome, MangaOutcome):
                stats.mangas_failed += 1
                if outcome == "config":
                    stats.config_errors += 1
                consecutive_failures += 1
                if should_abort_pass(consecutive_failures, max_failures):
                    logger.error(
                        "metadata pass source=%s aborted after %d consecutive failures", source_row.id, max_failures
                    )
                    stats.aborted = True
                    return
                continue
            consecutive_failures = 0
            _count(stats, outcome, attempted_covers)
            if should_stop(outcome.metadata, outcome.chapters.new, clean):
                logger.info("metadata pass source=%s caught up at %s", source_row.id, ref.key)
                stats.stopped_early = True
                return
        if not has_next:
            stats.walked_to_completion = True
            return
        page += 1


def unseen_refs(refs: list[SourceMangaRef], seen: set[str]) -> list[SourceMangaRef]:
    """Refs whose key was not walked yet, in list order; marks them seen."""
    fresh = []
    for ref in refs:
        if ref.key not in seen:
            seen.add(ref.key)
            fresh.append(ref)
    return fresh


def _process_one(
    source_row: Source, source: SourceAdapter, ref: SourceMangaRef, status: StatusHandle
) -> MangaOutcome | str:
    """Run the pipeline for one ref; "config" or "failed" when this manga failed (the pass goes on)."""
    try:
        return process_manga_ref(source_row, source, ref, status=status)
    except (SessionExpired, JobCancelled, RetryLater):
        # Not this manga's fault: the whole pass stops (a cooling source is deferred, not walked into failures).
        raise
    except SourceConfigError as exc:
        logger.warning("metadata pass source=%s manga %s: configuration error: %s", source_row.id, ref.key, exc)
        return "config"
    except Exception as exc:  # noqa: BLE001 - one manga's failure is counted, not fatal
        logger.warning("metadata pass source=%s manga %s failed: %s", source_row.id, ref.key, exc)
        return "failed"


def _count(stats: MetadataStats, outcome: MangaOutcome, attempted_covers: set[object]) -> None:
    if outcome.metadata is not MetadataOutcome.UNCHANGED:
        stats.upserted += 1
    if outcome.cover is CoverOutcome.FETCHED:
        stats.covers_fetched += 1
    elif outcome.cover is CoverOutcome.FAILED:
        attempted_covers.add(outcome.manga.id)


def _backfill_covers(
    source_row: Source,
    source: SourceAdapter,
    stats: MetadataStats,
    attempted_covers: set[object],
    *,
    status: StatusHandle,
    cancel: threading.Event,
) -> None:
    """Retry covers left failed or missing by earlier passes (not the ones that just failed)."""
    candidates = list(
        Manga.objects.filter(
            sources__source=source_row,
            cover_state__in=[Manga.CoverState.FAILED, Manga.CoverState.MISSING],
        )
        .exclude(cover_url="")
        .exclude(id__in=attempted_covers)
        .distinct()
        .order_by("-updated_at")[:COVER_BACKFILL_BATCH]
    )
    for index, manga in enumerate(candidates, start=1):
        _check(cancel)
        status.set_phase(phases.cover_backfill(index, len(candidates)))
        if fetch_cover(manga, source, status=status) is CoverOutcome.FETCHED:
            stats.covers_fetched += 1


def _record(source_row: Source, stats: MetadataStats, status: StatusHandle, source: SourceAdapter) -> None:
    notes = getattr(source, "notes", None)
    stats.dates_unparsed = getattr(notes, "unparsed_dates", 0)
    stats.chapters_external = getattr(notes, "external_chapters", 0)
    stats.chapters_unavailable = getattr(notes, "unavailable_chapters", 0)
    at = timezone.now()
    state_store.save_last_pass(source_row.id, {**asdict(stats), "source_id": source_row.id, "at": at.isoformat()})
    status.record_pass(
        discovered=stats.discovered,
        upserted=stats.upserted,
        covers_fetched=stats.covers_fetched,
        mangas_failed=stats.mangas_failed,
        at=at,
    )
    logger.info("metadata pass source=%s finished: %s", source_row.id, asdict(stats))


def _check(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise JobCancelled("metadata pass cancelled")
