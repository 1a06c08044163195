"""The persistent job queue over `crawler_jobs`: with its neighbours below, the only code that writes job state.

It stands on `jobs.models` and `jobs.payloads` alone. A lease's renewal is
`jobs.ownership`, its unsuccessful ends `jobs.retry`, work on rows no worker
holds `jobs.housekeeping`, dead-letter requeue `jobs.requeue`, the LISTEN
side of wake-ups `jobs.wakeup`; the guards they all share `jobs.guards`.

Workers `lease` rows, heartbeat with `renew` (`renew_many` for all they
hold), and finish with `ack_done`, or `ack_failed`, `ack_dead`, `defer` or
`release`. Every finishing call is a compare-and-set on
`(id, lease_generation, state='running')` whose row count is the answer: a
lease that was released, reclaimed or expired and re-leased by someone else
carries an older generation, so its late ack matches nothing and steps aside
instead of clobbering the successor (the force-analyze race).

Each operation has one implementation in the ORM: `lease` locks its
candidates with `select_for_update(skip_locked=True)` on PostgreSQL, and on
the embedded SQLite default the same semantics hold because every
transaction is `BEGIN IMMEDIATE`, which serialises leasers on the database
write lock. The three hot paths (claim, done acks, enqueue chunk) have a
hand-written PostgreSQL statement in `jobs.sql`, used there, with the
measurement that keeps each.
"""

from __future__ import annotations

import enum
import json
import logging
import uuid
from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone

from jobs import sql
from jobs.guards import guarded_row, now_plus, warn_stale
from jobs.kinds import decode
from jobs.lease import Lease
from jobs.models import Job, JobState
from jobs.payloads import Payload, PayloadError, source_of
from jobs.sql import NOTIFY_CHANNEL

logger = logging.getLogger(__name__)


# --- records -------------------------------------------------------------------


class EnqueueStatus(enum.Enum):
    INSERTED = "inserted"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class EnqueueResult:
    status: EnqueueStatus
    id: uuid.UUID | None = None

    @property
    def inserted(self) -> bool:
        return self.status is EnqueueStatus.INSERTED

    @property
    def skipped(self) -> bool:
        return self.status is EnqueueStatus.SKIPPED


Skipped = EnqueueResult(EnqueueStatus.SKIPPED)


def Inserted(job_id: uuid.UUID) -> EnqueueResult:  # noqa: N802 - reads like the seed's enum variant
    return EnqueueResult(EnqueueStatus.INSERTED, job_id)


def _due_by() -> Now | datetime:
    """What a job's `scheduled_at` must not pass to be leased now.

    PostgreSQL's clock, so hosts with drifting clocks agree. SQLite is one
    file on one machine, and its clock has milliseconds where Django stores
    microseconds: a job enqueued in the same millisecond as a lease compared
    as not due yet, so there it is this process's clock.
    """
    return Now() if connection.vendor == "postgresql" else timezone.now()


# --- enqueue ---------------------------------------------------------------------

# Rows per INSERT statement in `enqueue_many`.
ENQUEUE_CHUNK = 500


def enqueue(
    payload: Payload, *, scheduled_at: datetime | None = None, max_attempts: int | None = None
) -> EnqueueResult:
    """Insert a pending job, or return `Skipped` if one with its dedup key is in flight.

    Race-free by construction: the insert is `ON CONFLICT DO NOTHING` against
    the partial unique constraint over in-flight states, never a
    check-then-insert that two producers could both pass.
    """
    return enqueue_many([payload], scheduled_at=scheduled_at, max_attempts=max_attempts)[0]


def enqueue_many(
    payloads: Iterable[Payload], *, scheduled_at: datetime | None = None, max_attempts: int | None = None
) -> list[EnqueueResult]:
    """Enqueue in the given order (callers sort chapters by number first), all or nothing.

    Each payload gets its own outcome, exactly as `enqueue` would report it; a
    key repeated within the batch is inserted once. On PostgreSQL a chunk of
    rows is one round trip and the batch one commit.
    """
    batch = list(payloads)
    if max_attempts is not None and max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    attempts = max_attempts if max_attempts is not None else settings.JOBS_MAX_ATTEMPTS
    fast = sql.applies()
    insert = sql.insert_chunk if fast else _insert_orm
    # One statement is atomic on its own; several need a transaction.
    atomic: AbstractContextManager[Any] = (
        transaction.atomic() if len(batch) > ENQUEUE_CHUNK or not fast else nullcontext()
    )
    results: list[EnqueueResult] = []
    with atomic:
        for start in range(0, len(batch), ENQUEUE_CHUNK):
            chunk = batch[start : start + ENQUEUE_CHUNK]
            ids = [uuid.uuid4() for _ in chunk]
            inserted = insert(list(zip(ids, chunk, strict=True)), scheduled_at, attempts)
            results += [Inserted(job_id) if job_id in inserted else Skipped for job_id in ids]
    return results


def _insert_orm(rows: list[tuple[uuid.UUID, Payload]], scheduled_at: datetime | None, attempts: int) -> set[uuid.UUID]:
    """The chunk's rows in one multi-row insert that skips a conflicting dedup key; the ids that went in.

    created_at grows by a microsecond per row, the lease tie-break that keeps
    the given order (chapters by number) through to lease order.
    """
    now = timezone.now()
    jobs = []
    for ordinal, (job_id, payload) in enumerate(rows):
        refs = payload.row_refs()
        jobs.append(
            Job(
                id=job_id,
                kind=payload.kind,
                payload=payload.to_json(),
                state=JobState.PENDING,
                max_attempts=attempts,
                dedup_key=payload.dedup_key(),
                source_id=source_of(payload),
                manga_id=refs["manga_id"],
                chapter_id=refs["chapter_id"],
                page_id=refs["page_id"],
                created_at=now + timedelta(microseconds=ordinal),
                updated_at=now,
                scheduled_at=scheduled_at or now,
            )
        )
    Job.objects.bulk_create(jobs, ignore_conflicts=True)
    inserted = set(Job.objects.filter(id__in=[job.id for job in jobs]).values_list("id", flat=True))
    announce({job.kind for job in jobs if job.id in inserted})
    return inserted


# --- lease -------------------------------------------------------------------------


def lease(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    *,
    exclude_sources: Collection[str] = (),
) -> list[Lease]:
    """Claim up to `max` leasable rows: pending, or running with an expired lease.

    Rows come in `(scheduled_at, created_at)` order, so chapter-content jobs
    enqueued in ascending chapter number leave in that order. Concurrent
    leasers never receive the same row. A row whose payload cannot be decoded
    is dead-lettered with the decode error instead of reaching the worker.
    Jobs whose payload names a source in `exclude_sources` are left alone (a
    source whose session expired pauses without holding up the others).
    """
    if max <= 0:
        return []
    claim = sql.lease if sql.applies() else _lease_orm
    claimed = claim(kinds, max, lease_duration, exclude_sources)
    return _decode_leases(claimed)


def _lease_orm(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> list[tuple]:
    """The claim in the ORM: lock the candidates (skipping rows others hold), claim them, read them back.

    On PostgreSQL `FOR UPDATE SKIP LOCKED` keeps concurrent leasers apart; on
    SQLite the transaction is `BEGIN IMMEDIATE`, which holds the write lock
    from the first read, so leasers take turns.
    """
    leasable = Q(state=JobState.PENDING) | Q(state=JobState.RUNNING, leased_until__lt=Now())
    with transaction.atomic():
        candidates = Job.objects.filter(leasable, scheduled_at__lte=_due_by())
        if kinds is not None:
            candidates = candidates.filter(kind__in=kinds)
        if exclude_sources:
            candidates = candidates.exclude(source_id__in=list(exclude_sources))
        ids = list(
            candidates.order_by("scheduled_at", "created_at")
            .select_for_update(skip_locked=True)
            .values_list("id", flat=True)[:max]
        )
        if not ids:
            return []
        Job.objects.filter(id__in=ids).update(
            state=JobState.RUNNING,
            attempts=F("attempts") + 1,
            lease_generation=F("lease_generation") + 1,
            leased_until=now_plus(lease_duration),
            updated_at=Now(),
        )
        rows = {
            r[0]: r
            for r in Job.objects.filter(id__in=ids).values_list(
                "id", "payload", "attempts", "max_attempts", "lease_generation"
            )
        }
    return [rows[i] for i in ids]


def _decode_leases(rows: list[tuple]) -> list[Lease]:
    leases = []
    for job_id, raw, attempts, max_attempts, generation in rows:
        try:
            payload = decode(_parse_json(raw))
        except PayloadError as exc:
            _dead_letter_undecodable(job_id, generation, str(exc))
            continue
        leases.append(Lease(job_id, payload, attempts, max_attempts, generation))
    return leases


def _parse_json(raw: Any) -> Any:
    # Raw SQL hands jsonb back as text on PostgreSQL. Both backends refuse to
    # store invalid JSON, but a decode failure must still dead-letter, not raise.
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise PayloadError(f"payload is not valid JSON: {exc}") from exc


def _dead_letter_undecodable(job_id: uuid.UUID, generation: int, error: str) -> None:
    logger.error("lease: dead-lettering job=%s with an undecodable payload: %s", job_id, error)
    guarded_row(job_id, generation).update(
        state=JobState.DEAD, last_error=f"undecodable payload: {error}", leased_until=None, updated_at=Now()
    )


# --- done acks -------------------------------------------------------------------------


def ack_done(lease_: Lease) -> bool:
    """Mark done. A stale lease updates nothing, logs a warning and returns False."""
    updated = guarded_row(lease_.id, lease_.lease_generation).update(
        state=JobState.DONE, leased_until=None, updated_at=Now()
    )
    if not updated:
        warn_stale("ack_done", lease_)
    return updated == 1


def ack_done_many(leases: Sequence[Lease]) -> int:
    """`ack_done` for a batch in one statement; returns how many were still current.

    Each row keeps its own `(id, generation, running)` guard, so a stale lease
    in the batch steps aside (and is logged) while the rest complete. One
    round trip and one commit for the batch instead of one per job.
    """
    if not leases:
        return 0
    if sql.applies():
        acked = sql.ack_done_many([lease_.id for lease_ in leases], [lease_.lease_generation for lease_ in leases])
    else:
        acked = _ack_done_many_orm(leases)
    for lease_ in leases:
        if lease_.id not in acked:
            warn_stale("ack_done_many", lease_)
    return len(acked)


def _ack_done_many_orm(leases: Sequence[Lease]) -> set[uuid.UUID]:
    """Each lease's guarded `ack_done` update, all in one transaction (one commit); the ids still current."""
    with transaction.atomic():
        return {
            lease_.id
            for lease_ in leases
            if guarded_row(lease_.id, lease_.lease_generation).update(
                state=JobState.DONE, leased_until=None, updated_at=Now()
            )
        }


def ack_done_many_and_lease(
    done: Sequence[Lease],
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    *,
    exclude_sources: Collection[str] = (),
) -> tuple[int, list[Lease]]:
    """`ack_done_many(done)` then `lease(...)` in one commit (one statement on PostgreSQL); (acked, new leases).

    A step that finds jobs finished and slots free settles the one and fills
    the other together. Each ack keeps its `(id, generation, running)` guard
    and the claim keeps every property of `lease` but its order: on
    PostgreSQL, where several workers share the queue, a claim that names
    kinds or leaves sources out goes round the sources (`jobs.sql`), also
    with nothing to ack, so no source waits behind another's backlog.
    """
    if max <= 0 or (not done and not sql.applies()):
        return ack_done_many(done), lease(kinds, max, lease_duration, exclude_sources=exclude_sources)
    if sql.applies():
        acked, claimed = sql.ack_done_many_and_lease(
            [lease_.id for lease_ in done],
            [lease_.lease_generation for lease_ in done],
            kinds,
            max,
            lease_duration,
            exclude_sources,
        )
    else:
        with transaction.atomic():
            acked = _ack_done_many_orm(done)
            claimed = _lease_orm(kinds, max, lease_duration, exclude_sources)
    for lease_ in done:
        if lease_.id not in acked:
            warn_stale("ack_done_many_and_lease", lease_)
    return len(acked), _decode_leases(claimed)


def announce(kinds: Iterable[str]) -> None:
    """Wake idle workers of `kinds`: a job became pending outside `enqueue` (release, requeue).

    PostgreSQL only (delivered at commit); on SQLite idle workers poll.
    """
    if not sql.applies():
        return
    with connection.cursor() as cursor:
        for kind in sorted(set(kinds)):
            cursor.execute("SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, kind])
