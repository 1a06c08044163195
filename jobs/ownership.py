"""Whether a worker still holds its lease: a row-locked check for a handler's own writes (`holding`), and the
heartbeat's extension of it (`renew`, `renew_many`).

Both keep the queue's guard on `(id, lease_generation, state='running')`: a
lease released, reclaimed or re-leased meanwhile is reported lost, never
written through.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta

from django.db import transaction

from jobs import queries
from jobs.guards import warn_stale
from jobs.lease import Lease
from jobs.models import Job, JobState


@contextmanager
def holding(lease_: Lease) -> Iterator[bool]:
    """A transaction in which the job row of `lease_` is locked; yields whether the lease is still current.

    For a handler's own writes that must follow the same guard as its ack:
    written only while `(id, lease_generation, state='running')` matches, and
    the row lock held until commit means no release or re-lease can slip in
    between the check and the write (a force-analyze releasing the job
    mid-flight). A stale lease logs a warning; the caller writes nothing.
    """
    with transaction.atomic():
        current = (
            Job.objects.select_for_update()
            .filter(id=lease_.id, lease_generation=lease_.lease_generation, state=JobState.RUNNING)
            .exists()
        )
        if not current:
            warn_stale("holding", lease_)
        yield current


def renew(lease_: Lease, lease_duration: timedelta) -> bool:
    """Heartbeat: extend a still-owned lease. False means it was lost; stop that job."""
    return lease_.id in renew_many([lease_], lease_duration)


def renew_many(leases: Sequence[Lease], lease_duration: timedelta) -> set[uuid.UUID]:
    """`renew` for every lease a worker holds in one statement (`renew_leases`); returns the ids still held.

    Each row keeps `renew`'s `(id, generation, running)` guard, so a lease
    that was released or re-leased meanwhile is left out of the answer and its
    worker drops that job, while the others are extended. The heartbeat runs
    every JOBS_HEARTBEAT_SECS over at most the worker's concurrency: one
    statement a beat.
    """
    if not leases:
        return set()
    params = {
        "ids": queries.array(lease_.id for lease_ in leases),
        "generations": queries.array(lease_.lease_generation for lease_ in leases),
        **queries.clock(lease_duration),
    }
    return {queries.as_uuid(row[0]) for row in queries.run("renew_leases", params)}
