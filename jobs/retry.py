"""What becomes of a leased job that did not succeed: retried after a jittered backoff, dead-lettered, deferred or given back.

Every call here is a named statement (`jobs/queries.sql`) keeping the queue's
compare-and-set guard on `(id, lease_generation, state='running')`: a stale lease
updates nothing, logs a warning and gets False. Giving a lease back
(`release`, `defer`, `release_unowned`) refunds the attempt; failing it
(`ack_failed`) spends one.
"""

from __future__ import annotations

import logging
import random
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from jobs import queries
from jobs.guards import warn_stale
from jobs.lease import Lease
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
    if lease_.attempts >= lease_.max_attempts:
        return _settle("ack_failed", "dead_letter", lease_, error=error)
    return _settle("ack_failed", "retry_later", lease_, error=error, backoff=backoff_for(lease_.attempts))


def ack_dead(lease_: Lease, error: str) -> bool:
    """Dead-letter now, whatever the attempt count: the failure is deterministic (`PermanentError`)."""
    return _settle("ack_dead", "dead_letter", lease_, error=error)


def defer(lease_: Lease, until: datetime, reason: str) -> bool:
    """Back to pending at `until` without burning an attempt (the source said Retry-After).

    Bounded by JOBS_MAX_DEFERRALS: past it the job is dead-lettered with a
    reason saying so, so a source that always answers "later" cannot keep a
    job alive forever.
    """
    limit = settings.JOBS_MAX_DEFERRALS
    if _write("defer", lease_, error=reason, until=until, limit=limit):
        return True
    return _settle("defer", "dead_letter", lease_, error=f"deferred {limit} times (JOBS_MAX_DEFERRALS); last: {reason}")


def release(lease_: Lease) -> bool:
    """Give a held lease back without burning an attempt (shutdown, session expired)."""
    kinds = queries.run("release", {"id": lease_.id, "generation": lease_.lease_generation, **queries.clock()})
    if kinds:
        announce(kind for (kind,) in kinds)
    else:
        warn_stale("release", lease_)
    return len(kinds) == 1


def release_unowned(job_id: uuid.UUID) -> bool:
    """Drop a running lease by id alone (force-analyze, ops tools).

    Bumps the generation so the in-flight worker's eventual ack is a no-op,
    and refunds the attempt: an operator's click is not the job's failure.
    """
    kinds = queries.run("release_unowned", {"id": job_id, **queries.clock()})
    if kinds:
        announce(kind for (kind,) in kinds)
    else:
        logger.warning("release_unowned: job=%s is not running (already finished or never leased); skipping", job_id)
    return len(kinds) == 1


def _write(statement: str, lease_: Lease, *, backoff: timedelta = timedelta(0), **params: Any) -> bool:
    """Run a guarded write on the lease's row (`queries.sql`); whether it was still held."""
    guard = {"id": lease_.id, "generation": lease_.lease_generation}
    return bool(queries.run(statement, {**guard, **params, **queries.clock(backoff)}))


def _settle(op: str, statement: str, lease_: Lease, **params: Any) -> bool:
    """`_write`, and a warning naming `op` when the lease was no longer held."""
    written = _write(statement, lease_, **params)
    if not written:
        warn_stale(op, lease_)
    return written
