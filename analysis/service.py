"""Page analysis: queueing a page (`enqueue_for_page`) and recording an attempt's outcome.

Result writes are compare-and-set on the job's lease (`jobs.ownership.holding`):
a worker writes a page's analysis only while `(job id, lease_generation,
state='running')` still matches its lease, checked under the job row's lock
in the same transaction as the write. A worker whose lease was released mid-flight
(force-analyze) therefore cannot overwrite the successor's result, just as
its late `ack_done` cannot overwrite the successor's job state (`jobs.guards`).
"""

from __future__ import annotations

import enum
import logging
import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from analysis.backends.base import AnalysisResult
from analysis.models import PageAnalysis
from analysis.payloads import AnalyzePage
from catalog.models import Page
from jobs import housekeeping, ownership, queue, retry
from jobs.lease import Lease
from jobs.models import IN_FLIGHT_STATES, Job, JobState

logger = logging.getLogger(__name__)

# A force request re-examines the in-flight job when it changes state under
# it (leased, finished); a handful of rounds is far more than any real race needs.
MAX_FORCE_ROUNDS = 5


class EnqueueForPageOutcome(str, enum.Enum):
    """What `enqueue_for_page` did, for the audit row."""

    # No job was in flight for the page: a new one was inserted.
    INSERTED = "inserted"
    # A pending non-force job existed: its payload now carries force=True.
    UPGRADED_PENDING = "upgraded_pending"
    # A pending job already carried force=True: nothing to change.
    ALREADY_FORCED = "already_forced"
    # A running job was released (its worker's ack and result are discarded)
    # and will re-run with force=True.
    RELEASED_RUNNING = "released_running"
    # A non-force request while a job is already in flight: nothing added.
    SKIPPED_PENDING = "skipped_pending"
    # The in-flight sibling finished between our insert attempt and our
    # look at it, so a fresh job was inserted after all.
    FELL_THROUGH_INSERTED = "fell_through_inserted"


class EnqueueContended(RuntimeError):
    """The page's in-flight job kept changing state; the force request was not applied."""


def ensure_analysis_row(page: Page) -> PageAnalysis:
    analysis, _created = PageAnalysis.objects.get_or_create(page=page)
    return analysis


def enqueue_for_page(page: Page, force: bool = False) -> EnqueueForPageOutcome:
    """Queue analysis of `page`; with `force`, make sure it is (re-)analysed even if done.

    The in-flight dedup constraint would silently swallow a force request
    behind a non-force job, so a force request that collides:
    - upgrades a pending job's `force` flag in place;
    - releases a running job (`release_unowned`: its worker's late ack and
      result become no-ops) and refreshes its payload to force, atomically,
      so no worker can lease it in between with the stale payload;
    - inserts after all when the sibling drained mid-call.
    Also makes sure the page has a `PageAnalysis` row.
    """
    ensure_analysis_row(page)
    payload = AnalyzePage(page_id=page.id, force=force)
    if queue.enqueue(payload).inserted:
        return EnqueueForPageOutcome.INSERTED
    if not force:
        return EnqueueForPageOutcome.SKIPPED_PENDING
    for _round in range(MAX_FORCE_ROUNDS):
        outcome = _force_in_flight(payload)
        if outcome is not None:
            return outcome
    raise EnqueueContended(f"analysis job for page {page.id} kept changing state; force not applied")


def _force_in_flight(payload: AnalyzePage) -> EnqueueForPageOutcome | None:
    """One attempt to apply force to the page's in-flight job; None means it changed under us, look again."""
    sibling = (
        Job.objects.filter(dedup_key=payload.dedup_key(), state__in=IN_FLIGHT_STATES)
        .values("id", "state", "payload")
        .first()
    )
    if sibling is None:
        return EnqueueForPageOutcome.FELL_THROUGH_INSERTED if queue.enqueue(payload).inserted else None
    if sibling["state"] == JobState.PENDING:
        if (sibling["payload"] or {}).get("force") is True:
            return EnqueueForPageOutcome.ALREADY_FORCED
        if housekeeping.upgrade_pending_payload(sibling["id"], payload):
            return EnqueueForPageOutcome.UPGRADED_PENDING
        return None
    with transaction.atomic():
        # Both updates hold the row lock until commit, so a leaser (SKIP
        # LOCKED) cannot take the released row with its stale payload.
        if retry.release_unowned(sibling["id"]) and housekeeping.upgrade_pending_payload(sibling["id"], payload):
            return EnqueueForPageOutcome.RELEASED_RUNNING
        transaction.set_rollback(True)
    return None


def should_skip(analysis: PageAnalysis, payload: AnalyzePage) -> bool:
    """A page already analysed is not analysed again unless the job is a force re-analysis."""
    return analysis.state == PageAnalysis.State.DONE and not payload.force


def _write_if_lease_current(lease: Lease, page_id: uuid.UUID, fields: dict[str, Any]) -> bool:
    """Update the page's analysis only while `lease` still owns its job (`ownership.holding`); True if written."""
    with ownership.holding(lease) as current:
        if current:
            PageAnalysis.objects.filter(page_id=page_id).update(**fields, updated_at=timezone.now())
        return current


def mark_running(lease: Lease, page_id: uuid.UUID) -> bool:
    return _write_if_lease_current(lease, page_id, {"state": PageAnalysis.State.RUNNING})


def record_success(lease: Lease, page_id: uuid.UUID, result: AnalysisResult, *, backend: str, duration_ms: int) -> bool:
    """Store a successful analysis, the only write that sets `duration_ms`; False if the lease went stale."""
    return _write_if_lease_current(
        lease,
        page_id,
        {
            "state": PageAnalysis.State.DONE,
            "ocr_text": result.ocr_text,
            "tags": list(result.tags),
            "scene_description": result.description,
            "nsfw": result.nsfw,
            "nsfw_score": result.nsfw_score,
            "backend": backend,
            "model": result.model,
            "duration_ms": duration_ms,
            "error": "",
            "analyzed_at": timezone.now(),
        },
    )


def record_failure(lease: Lease, page_id: uuid.UUID, error: str) -> bool:
    """Record a failed attempt's error. The record_duration gate: `duration_ms` and the last good
    results are left alone, so a failed retry of a force re-analysis never overwrites them."""
    return _write_if_lease_current(lease, page_id, {"state": PageAnalysis.State.FAILED, "error": error})
