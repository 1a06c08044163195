"""The compare-and-set guards every writer of job state shares (`jobs.queue`, `jobs.retry`, `jobs.ownership`,
`jobs.housekeeping`).

A finishing write matches `(id, lease_generation, state='running')` and its
row count is the answer: a lease released, reclaimed or re-leased meanwhile
carries an older generation, so its late write matches nothing and is logged
instead of clobbering the successor.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.db.models import CharField, DateTimeField, ExpressionWrapper, F, QuerySet, Value
from django.db.models.functions import Concat, Greatest, Now

from jobs.lease import Lease
from jobs.models import Job, JobState

# The queue's logger: a stale write is reported as the queue's, whichever writer tried it.
logger = logging.getLogger("jobs.queue")


def now_plus(duration: timedelta) -> ExpressionWrapper:
    return ExpressionWrapper(Now() + Value(duration), output_field=DateTimeField())


def by_id_while_running(job_id: uuid.UUID) -> QuerySet[Job]:
    """The row `job_id` if it is running, found through the primary key only.

    A plain `state = 'running'` lets the planner pick crawler_jobs_counted_idx
    (running rows look rare), and that index still holds a dead 'running' entry
    for every job leased since the last vacuum, so each ack would walk them all:
    O(jobs drained) per ack. Comparing an expression of `state` keeps the guard
    but takes that index out of play, leaving the primary-key probe.
    """
    return Job.objects.alias(state_value=Concat("state", Value(""), output_field=CharField())).filter(
        id=job_id, state_value=JobState.RUNNING
    )


def by_id_in_while_running(job_ids: list[uuid.UUID]) -> QuerySet[Job]:
    """`by_id_while_running` for several ids at once: primary-key probes, the state compared as an expression."""
    return Job.objects.alias(state_value=Concat("state", Value(""), output_field=CharField())).filter(
        id__in=job_ids, state_value=JobState.RUNNING
    )


def guarded_row(job_id: uuid.UUID, generation: int) -> QuerySet[Job]:
    return by_id_while_running(job_id).filter(lease_generation=generation)


def warn_stale(op: str, lease_: Lease) -> None:
    logger.warning(
        "%s: lease no longer current (generation mismatch: released, reclaimed or re-leased); "
        "skipping update job=%s generation=%s",
        op,
        lease_.id,
        lease_.lease_generation,
    )


# Giving a lease back: pending again, the attempt refunded, the generation bumped so a late ack matches nothing.
REFUND = {
    "state": JobState.PENDING,
    "leased_until": None,
    "attempts": Greatest(Value(0), F("attempts") - 1),
    "lease_generation": F("lease_generation") + 1,
}
