"""What becomes of a leased job that did not succeed: retried after a jittered backoff, dead-lettered, deferred or given back.

Every call here keeps the queue's compare-and-set guard on
`(id, lease_generation, state='running')` (`jobs.queue`): a stale lease
updates nothing, logs a warning and gets False. Giving a lease back
(`release`, `defer`, `release_unowned`) refunds the attempt; failing it
(`ack_failed`) spends one.
"""

from __future__ import annotations

import logging
import random
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Now

from jobs.guards import REFUND, by_id_while_running, guarded_row, now_plus, warn_stale
from jobs.lease import Lease
from jobs.models import Job, JobState
from jobs.queue import announce

logger = logging.getLogger(__name__)


BACKOFF_BASE_SECS = 60
BACKOFF_CAP_SECS = 3600


# --- pure decisions ------------------------------------------------------------


def backoff_base(attempts: int) -> timedelta:
    """Exponential retry delay before jitter: 60 s for the first failure, doubling, capped at 1 h.

    `attempts` is the post-increment count reported by `lease` (first failure
    has attempts == 1). Zero and negatives behave like 1; the shift is clamped
    so absurd counts cannot overflow.
    """
    shift = min(max(attempts - 1, 0), 20)
    return timedelta(seconds=min(BACKOFF_BASE_SECS * (1 << shift), BACKOFF_CAP_SECS))


def apply_jitter(base: timedelta, jitter: float) -> timedelta:
    """Spread `base` by a factor in [0.8, 1.2): `jitter` in [0, 1) picks where.

    Retries of many jobs failed by one source outage then do not all come back
    in the same second (no thundering herd). Out-of-range input is clamped.
    """
    frac = min(max(jitter, 0.0), 1.0)
    return timedelta(seconds=round(base.total_seconds() * (0.8 + 0.4 * frac)))


def backoff_for(attempts: int) -> timedelta:
    return apply_jitter(backoff_base(attempts), random.random())


# --- settling a lease that did not succeed ------------------------------------------


def ack_failed(lease_: Lease, error: str) -> bool:
    """Record a failed attempt: dead at `max_attempts`, else pending again after a jittered backoff."""
    guarded = guarded_row(lease_.id, lease_.lease_generation)
    if lease_.attempts >= lease_.max_attempts:
        updated = guarded.update(state=JobState.DEAD, last_error=error, leased_until=None, updated_at=Now())
    else:
        updated = guarded.update(
            state=JobState.PENDING,
            last_error=error,
            leased_until=None,
            scheduled_at=now_plus(backoff_for(lease_.attempts)),
            updated_at=Now(),
        )
    if not updated:
        warn_stale("ack_failed", lease_)
    return updated == 1


def ack_dead(lease_: Lease, error: str) -> bool:
    """Dead-letter now, whatever the attempt count: the failure is deterministic (`PermanentError`)."""
    updated = guarded_row(lease_.id, lease_.lease_generation).update(
        state=JobState.DEAD, last_error=error, leased_until=None, updated_at=Now()
    )
    if not updated:
        warn_stale("ack_dead", lease_)
    return updated == 1


def defer(lease_: Lease, until: datetime, reason: str) -> bool:
    """Back to pending at `until` without burning an attempt (the source said Retry-After).

    Bounded by JOBS_MAX_DEFERRALS: past it the job is dead-lettered with a
    reason saying so, so a source that always answers "later" cannot keep a
    job alive forever.
    """
    limit = settings.JOBS_MAX_DEFERRALS
    guarded = guarded_row(lease_.id, lease_.lease_generation)
    updated = guarded.filter(deferrals__lt=limit).update(
        **REFUND, deferrals=F("deferrals") + 1, last_error=reason, scheduled_at=until, updated_at=Now()
    )
    if not updated:
        updated = guarded.update(
            state=JobState.DEAD,
            last_error=f"deferred {limit} times (JOBS_MAX_DEFERRALS); last: {reason}",
            leased_until=None,
            updated_at=Now(),
        )
    if not updated:
        warn_stale("defer", lease_)
    return updated == 1


def release(lease_: Lease) -> bool:
    """Give a held lease back without burning an attempt (shutdown, session expired)."""
    updated = guarded_row(lease_.id, lease_.lease_generation).update(**REFUND, updated_at=Now())
    if updated:
        announce([lease_.kind])
    else:
        warn_stale("release", lease_)
    return updated == 1


def release_unowned(job_id: uuid.UUID) -> bool:
    """Drop a running lease by id alone (force-analyze, ops tools).

    Bumps the generation so the in-flight worker's eventual ack is a no-op,
    and refunds the attempt: an operator's click is not the job's failure.
    """
    updated = by_id_while_running(job_id).update(**REFUND, updated_at=Now())
    if updated:
        announce(Job.objects.filter(id=job_id).values_list("kind", flat=True))
    else:
        logger.warning("release_unowned: job=%s is not running (already finished or never leased); skipping", job_id)
    return updated == 1
