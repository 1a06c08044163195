"""The persistent job queue over `crawler_jobs`: with its neighbours below, the only code that writes job state.

It stands on `jobs.models`, `jobs.payloads` and the named statements of
`jobs.queries`. A lease's renewal is `jobs.ownership`, its unsuccessful ends
`jobs.retry`, work on rows no worker holds `jobs.housekeeping`, dead-letter
requeue `jobs.requeue`, the LISTEN side of wake-ups `jobs.wakeup`; the guards
they all share `jobs.guards`.

Workers `lease` rows, heartbeat with `renew` (`renew_many` for all they
hold), and finish with `ack_done`, or `ack_failed`, `ack_dead`, `defer` or
`release`. Every finishing call is a compare-and-set on
`(id, lease_generation, state='running')` whose row count is the answer: a
lease that was released, reclaimed or expired and re-leased by someone else
carries an older generation, so its late ack matches nothing and steps aside
instead of clobbering the successor (the force-analyze race).

The hot operations (enqueue a chunk, claim, done acks, the acks and claim of
a worker's step) are one named statement each in `jobs/queries.sql`, with a
SQLite variant beside the PostgreSQL one where the text must differ: on
PostgreSQL the claim locks with `FOR UPDATE SKIP LOCKED`; on the embedded
SQLite default every transaction is `BEGIN IMMEDIATE`, which serialises
leasers on the database write lock.
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
from django.utils import timezone

from jobs import queries
from jobs.guards import warn_stale
from jobs.kinds import decode
from jobs.lease import Lease
from jobs.payloads import Payload, PayloadError, source_of

# The channel every job NOTIFY goes out on (`queries.sql`: enqueue_chunk, announce) and workers LISTEN to.
NOTIFY_CHANNEL = "crawler_jobs"

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


def Inserted(job_id: uuid.UUID) -> EnqueueResult:  # noqa: N802 - reads like an enum variant beside Skipped
    return EnqueueResult(EnqueueStatus.INSERTED, job_id)


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
    # One statement is atomic on its own; several need a transaction.
    atomic: AbstractContextManager[Any] = transaction.atomic() if len(batch) > ENQUEUE_CHUNK else nullcontext()
    results: list[EnqueueResult] = []
    with atomic:
        for start in range(0, len(batch), ENQUEUE_CHUNK):
            chunk = batch[start : start + ENQUEUE_CHUNK]
            ids = [uuid.uuid4() for _ in chunk]
            inserted = _insert_chunk(list(zip(ids, chunk, strict=True)), scheduled_at, attempts)
            results += [Inserted(job_id) if job_id in inserted else Skipped for job_id in ids]
    return results


def _insert_chunk(
    rows: list[tuple[uuid.UUID, Payload]], scheduled_at: datetime | None, attempts: int
) -> set[uuid.UUID]:
    """Insert a chunk of pending jobs in one statement (`enqueue_chunk`); the ids that went in.

    The chunk travels as one JSON document: one literal to quote instead of
    seven arrays of element literals, which dominated the client-side cost.
    created_at grows by a microsecond per row where the database does not
    stamp it itself (SQLite), the lease tie-break that keeps the given order.
    """
    now = timezone.now()
    document = [
        {
            "id": str(job_id),
            "kind": payload.kind,
            "payload": payload.to_json(),
            "dedup_key": payload.dedup_key(),
            "source_id": source_of(payload),
            "created_at": queries.stored_time(now + timedelta(microseconds=ordinal)),
            **{name: str(ref) if ref else None for name, ref in payload.row_refs().items()},
        }
        for ordinal, (job_id, payload) in enumerate(rows)
    ]
    params = {"rows": json.dumps(document), "max_attempts": attempts, "scheduled_at": scheduled_at, "now": now}
    return {queries.as_uuid(row[0]) for row in queries.run("enqueue_chunk", params) if row[0] is not None}


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
    statement = "lease_jobs_by_group" if _by_group(kinds, exclude_sources) else "lease_jobs"
    return _decode_leases(_claim(statement, (), kinds, max, lease_duration, exclude_sources)[1])


def _by_group(kinds: list[str] | None, exclude_sources: Collection[str]) -> bool:
    """Whether a claim takes the per-group walk: it names kinds or leaves sources out (`queries.sql`)."""
    return kinds is not None or bool(exclude_sources)


def _claim(
    statement: str,
    acks: Sequence[Lease],
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> tuple[set[uuid.UUID], list[tuple]]:
    """Run a claim statement; (ids acked, claimed rows (id, payload, attempts, max_attempts, generation) in lease order).

    A claimed row ends with its `ord` (UPDATE ... RETURNING does not promise
    the walk's order: `ord` restores it); an acked row's `ord` is NULL.
    """
    rows = queries.run(statement, claim_params(kinds, max, lease_duration, exclude_sources, acks))
    acked = {queries.as_uuid(row[0]) for row in rows if row[5] is None}
    claimed = sorted((row for row in rows if row[5] is not None), key=lambda row: row[5])
    return acked, [(queries.as_uuid(row[0]), *row[1:5]) for row in claimed]


def claim_params(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str] = (),
    acks: Sequence[Lease] = (),
) -> dict[str, Any]:
    """The named parameters of every claim statement (`lease_jobs`, `lease_jobs_by_group`, `lease_jobs_round_the_sources`)."""
    return {
        "any_kind": kinds is None,
        "kinds": queries.array(kinds or ()),
        "excluded": queries.array(sorted(exclude_sources)),
        "max": max,
        **_ack_params(acks),
        **queries.clock(lease_duration),
    }


def _ack_params(acks: Sequence[Lease]) -> dict[str, str]:
    return {
        "ack_ids": queries.array(lease_.id for lease_ in acks),
        "ack_generations": queries.array(lease_.lease_generation for lease_ in acks),
    }


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
    params = {"id": job_id, "generation": generation, "error": f"undecodable payload: {error}"}
    queries.run("dead_letter", {**params, **queries.clock()})


# --- done acks -------------------------------------------------------------------------


def ack_done(lease_: Lease) -> bool:
    """Mark done. A stale lease updates nothing, logs a warning and returns False."""
    return ack_done_many([lease_], op="ack_done") == 1


def ack_done_many(leases: Sequence[Lease], *, op: str = "ack_done_many") -> int:
    """`ack_done` for a batch in one statement; returns how many were still current.

    Each row keeps its own `(id, generation, running)` guard, so a stale lease
    in the batch steps aside (and is logged) while the rest complete. One
    round trip and one commit for the batch instead of one per job.
    """
    if not leases:
        return 0
    rows = queries.run("ack_done", {**_ack_params(leases), **queries.clock()})
    acked = {queries.as_uuid(row[0]) for row in rows}
    for lease_ in leases:
        if lease_.id not in acked:
            warn_stale(op, lease_)
    return len(acked)


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
    kinds or leaves sources out goes round the sources (`lease_jobs_round_the_sources`), also
    with nothing to ack, so no source waits behind another's backlog.
    """
    if max <= 0:
        return ack_done_many(done), []
    statement = "lease_jobs_round_the_sources" if _by_group(kinds, exclude_sources) else "lease_jobs"
    acked, claimed = _claim(statement, done, kinds, max, lease_duration, exclude_sources)
    for lease_ in done:
        if lease_.id not in acked:
            warn_stale("ack_done_many_and_lease", lease_)
    return len(acked), _decode_leases(claimed)


def announce(kinds: Iterable[str]) -> None:
    """Wake idle workers of `kinds`: a job became pending outside `enqueue` (release, requeue).

    PostgreSQL only (delivered at commit); on SQLite idle workers poll.
    """
    if connection.vendor != "postgresql":
        return
    for kind in sorted(set(kinds)):
        queries.run("announce", {"kind": kind})
