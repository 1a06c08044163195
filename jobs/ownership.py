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
from functools import reduce
from operator import or_

from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Now

from jobs.guards import by_id_in_while_running, guarded_row, now_plus, warn_stale
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
    updated = guarded_row(lease_.id, lease_.lease_generation).update(
        leased_until=now_plus(lease_duration), updated_at=Now()
    )
    return updated == 1


def renew_many(leases: Sequence[Lease], lease_duration: timedelta) -> set[uuid.UUID]:
    """`renew` for every lease a worker holds in one UPDATE; returns the ids still held.

    Each row keeps `renew`'s `(id, generation, running)` guard, so a lease
    that was released or re-leased meanwhile is left out of the answer and its
    worker drops that job, while the others are extended. The heartbeat runs
    every JOBS_HEARTBEAT_SECS over at most the worker's concurrency: one
    statement a beat when every lease is still held (the usual case), and a
    second that reads which are when some were lost.
    """
    if not leases:
        return set()
    held = renewal_rows(leases)
    if held.update(leased_until=now_plus(lease_duration), updated_at=Now()) == len({lease_.id for lease_ in leases}):
        return {lease_.id for lease_ in leases}
    # Some lease was lost: the rows that still match the guard are the ones held (a generation never comes back).
    return set(held.values_list("id", flat=True))


def renewal_rows(leases: Sequence[Lease]) -> QuerySet[Job]:
    """The rows of `leases` still running under the generation each was leased with (primary-key probes)."""
    pairs = reduce(or_, (Q(id=lease_.id, lease_generation=lease_.lease_generation) for lease_ in leases))
    return by_id_in_while_running([lease_.id for lease_ in leases]).filter(pairs)
