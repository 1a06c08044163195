"""The persistent job queue over `crawler_jobs`: the only code that writes job state.

It stands on `jobs.models` and `jobs.payloads` alone. Dead-letter requeue is
`jobs.requeue`, the LISTEN side of wake-ups `jobs.wakeup`.

Workers `lease` rows, heartbeat with `renew` (`renew_many` for all they hold), and finish with `ack_done`,
`ack_failed` or `release`. Every finishing call is a compare-and-set on
`(id, lease_generation, state='running')` whose row count is the answer: a
lease that was released, reclaimed or expired and re-leased by someone else
carries an older generation, so its late ack matches nothing and steps aside
instead of clobbering the successor (the force-analyze race).

PostgreSQL is the production backend: `lease` is one `FOR UPDATE SKIP LOCKED`
statement and `enqueue` NOTIFYs idle workers in the same round trip. On the
embedded SQLite default the same semantics hold because every transaction is
`BEGIN IMMEDIATE`, which serialises leasers on the database write lock.
"""

from __future__ import annotations

import enum
import json
import logging
import random
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, DateTimeField, ExpressionWrapper, F, Field, Q, QuerySet, Value
from django.db.models.functions import Concat, Greatest, Now
from django.utils import timezone

from jobs.models import Job, JobState
from jobs.payloads import Payload, PayloadError, decode

logger = logging.getLogger(__name__)

NOTIFY_CHANNEL = "crawler_jobs"

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


@dataclass(frozen=True)
class Lease:
    id: uuid.UUID
    payload: Payload
    attempts: int
    max_attempts: int
    lease_generation: int

    @property
    def kind(self) -> str:
        return self.payload.kind


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def _now_plus(duration: timedelta) -> ExpressionWrapper:
    return ExpressionWrapper(Now() + Value(duration), output_field=DateTimeField())


def _field(name: str) -> Field[Any, Any]:
    return cast("Field[Any, Any]", Job._meta.get_field(name))


def _db_value(field_name: str, value: Any) -> Any:
    return _field(field_name).get_db_prep_save(value, connection)


# --- enqueue ---------------------------------------------------------------------

# Rows per INSERT statement in `enqueue_many`.
ENQUEUE_CHUNK = 500

# One statement inserts a whole chunk. `ON CONFLICT DO NOTHING` against the
# partial unique constraint makes each row's dedup race-free (also between two
# rows of the same chunk). created_at is the lease tie-break, so it must grow
# row by row even inside one transaction: clock_timestamp() plus the row's
# ordinal in microseconds does, which keeps chapter-number enqueue order intact
# through to lease order. Other times are statement_timestamp(), what Django's
# Now() compiles to in every guarded update and what `lease` compares against,
# so hosts with drifting clocks agree. One NOTIFY per kind inserted rides in
# the same round trip and is delivered at commit.
_PG_ENQUEUE_SQL = f"""
WITH rows AS (
    SELECT (r.job->>'id')::uuid AS id, r.job->>'kind' AS kind, r.job->'payload' AS payload,
           r.job->>'dedup_key' AS dedup_key, r.job->>'source_id' AS source_id, (r.job->>'manga_id')::uuid AS manga_id,
           (r.job->>'chapter_id')::uuid AS chapter_id, (r.job->>'page_id')::uuid AS page_id, r.ord
      FROM jsonb_array_elements(%(rows)s::jsonb) WITH ORDINALITY AS r(job, ord)
), ins AS (
    INSERT INTO crawler_jobs (id, kind, payload, state, attempts, max_attempts, lease_generation, last_error,
                              dedup_key, source_id, manga_id, chapter_id, page_id, created_at, updated_at, scheduled_at)
    SELECT id, kind, payload, 'pending', 0, %(max_attempts)s, 0, '',
           dedup_key, source_id, manga_id, chapter_id, page_id,
           clock_timestamp() + ord * interval '1 microsecond', statement_timestamp(),
           COALESCE(%(scheduled_at)s::timestamptz, statement_timestamp())
      FROM rows ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING id, kind
)
SELECT id, NULL FROM ins
UNION ALL
SELECT NULL, pg_notify('{NOTIFY_CHANNEL}', kind) FROM (SELECT DISTINCT kind FROM ins) AS inserted_kinds
"""


def source_of(payload: Payload) -> str:
    """The source a job works for ("" for kinds with none, such as analyze_page): its `source_id` column."""
    return str(getattr(payload, "source_id", "") or "")


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
    attempts = max_attempts if max_attempts is not None else settings.CRAWLER_MAX_ATTEMPTS
    insert = _insert_pg if _is_postgres() else _insert_sqlite
    # One statement is atomic on its own; several need a transaction.
    atomic: AbstractContextManager[Any] = (
        transaction.atomic() if len(batch) > ENQUEUE_CHUNK or not _is_postgres() else nullcontext()
    )
    results: list[EnqueueResult] = []
    with atomic:
        for start in range(0, len(batch), ENQUEUE_CHUNK):
            chunk = batch[start : start + ENQUEUE_CHUNK]
            ids = [uuid.uuid4() for _ in chunk]
            inserted = insert(list(zip(ids, chunk, strict=True)), scheduled_at, attempts)
            results += [Inserted(job_id) if job_id in inserted else Skipped for job_id in ids]
    return results


def _insert_pg(rows: list[tuple[uuid.UUID, Payload]], scheduled_at: datetime | None, attempts: int) -> set[uuid.UUID]:
    # The chunk travels as one JSON document: one literal to quote instead of
    # seven arrays of element literals, which dominated the client-side cost.
    document = [
        {
            "id": str(job_id),
            "kind": payload.kind,
            "payload": payload.to_json(),
            "dedup_key": payload.dedup_key(),
            "source_id": source_of(payload),
            **{name: str(ref) if ref else None for name, ref in payload.row_refs().items()},
        }
        for job_id, payload in rows
    ]
    params: dict[str, Any] = {"rows": json.dumps(document), "max_attempts": attempts, "scheduled_at": scheduled_at}
    with connection.cursor() as cursor:
        cursor.execute(_PG_ENQUEUE_SQL, params)
        return {row[0] for row in cursor.fetchall() if row[0] is not None}


def _insert_sqlite(
    rows: list[tuple[uuid.UUID, Payload]], scheduled_at: datetime | None, attempts: int
) -> set[uuid.UUID]:
    inserted = set()
    for job_id, payload in rows:
        now = timezone.now()
        refs = payload.row_refs()
        values: dict[str, Any] = {
            "id": job_id,
            "kind": payload.kind,
            "payload": payload.to_json(),
            "state": JobState.PENDING.value,
            "attempts": 0,
            "max_attempts": attempts,
            "lease_generation": 0,
            "last_error": "",
            "dedup_key": payload.dedup_key(),
            "source_id": source_of(payload),
            "manga": refs["manga_id"],
            "chapter": refs["chapter_id"],
            "page": refs["page_id"],
            "created_at": now,
            "updated_at": now,
            "scheduled_at": scheduled_at or now,
        }
        columns = ", ".join(_field(name).column for name in values)
        placeholders = ", ".join(["%s"] * len(values))
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO crawler_jobs ({columns}) VALUES ({placeholders}) ON CONFLICT DO NOTHING RETURNING id",
                [_db_value(name, value) for name, value in values.items()],
            )
            if cursor.fetchone():
                inserted.add(job_id)
    return inserted


# --- lease -------------------------------------------------------------------------


def _lease_candidates(extra: str = "") -> str:
    """The rows a lease claims: leasable, due, of the kinds, not of an excluded source; locked, skipping others' locks.

    `ord` numbers them in the walk's order (an empty window keeps its
    input's order), so the claimed rows go back in lease order without a sort.
    """
    return f"""
    SELECT id, row_number() OVER () AS ord FROM (
    SELECT id FROM crawler_jobs
     WHERE (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
       AND scheduled_at <= statement_timestamp()
       AND (%(any_kind)s OR kind = ANY(%(kinds)s::text[]))
       AND COALESCE(payload->>'source_id', '') <> ALL(%(excluded)s::text[]){extra}
     ORDER BY scheduled_at, created_at
     LIMIT %(max)s
     FOR UPDATE SKIP LOCKED) AS walked"""


_CLAIM_LEASED = """
    UPDATE crawler_jobs j
       SET state = 'running',
           attempts = j.attempts + 1,
           lease_generation = j.lease_generation + 1,
           leased_until = statement_timestamp() + %(duration)s,
           updated_at = statement_timestamp()
      FROM leased l
     WHERE j.id = l.id
    RETURNING j.id, j.payload, j.attempts, j.max_attempts, j.lease_generation, l.ord"""

# The claim must walk crawler_jobs_leasable_idx in (scheduled_at, created_at)
# order and stop after `max` rows. When the statistics are stale (a burst of
# enqueues the last ANALYZE never saw, so pending rows look rare, which a
# table of done history keeps true for long) the planner instead fetches
# every pending row through crawler_jobs_counted_idx and sorts them all:
# O(backlog) per lease, 16 ms at 10,000 pending against under 1 ms. With
# sorts off for the lease's own transaction, the index walk is the one plan
# that needs no sort. JIT goes off with them: a disabled node's cost must never
# look like a query worth compiling (that took 200 ms). In an explicit
# transaction both are put back after the claim.
_ORDERED_WALK_SETTINGS = ("enable_sort", "jit")
_ORDERED_WALK = "".join(f"SET LOCAL {name} = off;\n" for name in _ORDERED_WALK_SETTINGS)
_ORDERED_WALK_END = "".join(f";\nSET LOCAL {name} TO DEFAULT" for name in _ORDERED_WALK_SETTINGS)

_PG_LEASE_SQL = f"WITH leased AS ({_lease_candidates()}\n){_CLAIM_LEASED}"


def _lease_candidates_by_group(extra: str = "") -> str:
    """`_lease_candidates` for a lease that leaves sources out or names kinds: only eligible rows are read.

    The in-flight (source, kind) groups are found by skipping through
    crawler_jobs_source_lease_idx (one probe per group, however many jobs a
    group holds); each eligible group is then walked in (scheduled_at,
    created_at) order for at most `max` rows, and the oldest `max` of those
    are claimed. A million pending jobs of an excluded source are never read:
    the other sources' lease costs what it would on an empty queue. Rows one
    group locks beyond the `max` claimed are freed when the statement commits.
    """
    return f"""
    WITH RECURSIVE in_flight AS (
        (SELECT source_id, kind FROM crawler_jobs
          WHERE state IN ('pending', 'running') ORDER BY source_id, kind LIMIT 1)
        UNION ALL
        SELECT later.source_id, later.kind FROM in_flight g CROSS JOIN LATERAL (
            SELECT source_id, kind FROM crawler_jobs
             WHERE state IN ('pending', 'running') AND (source_id, kind) > (g.source_id, g.kind)
             ORDER BY source_id, kind LIMIT 1) AS later
    ), walked AS (
        SELECT c.id, c.scheduled_at, c.created_at FROM in_flight g CROSS JOIN LATERAL (
            SELECT id, scheduled_at, created_at FROM crawler_jobs
             WHERE source_id = g.source_id AND kind = g.kind
               AND (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
               AND scheduled_at <= statement_timestamp(){extra}
             ORDER BY scheduled_at, created_at
             LIMIT %(max)s
             FOR UPDATE SKIP LOCKED) AS c
         WHERE (%(any_kind)s OR g.kind = ANY(%(kinds)s::text[])) AND g.source_id <> ALL(%(excluded)s::text[])
    )
    SELECT id, row_number() OVER (ORDER BY scheduled_at, created_at) AS ord FROM (
        SELECT id, scheduled_at, created_at FROM walked ORDER BY scheduled_at, created_at LIMIT %(max)s
    ) AS oldest"""


_PG_LEASE_BY_GROUP_SQL = f"WITH leased AS ({_lease_candidates_by_group()}\n){_CLAIM_LEASED}"


def _by_group(kinds: list[str] | None, exclude_sources: Collection[str]) -> bool:
    """Whether a lease takes the per-group walk: it names kinds or leaves sources out."""
    return kinds is not None or bool(exclude_sources)


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
    if _is_postgres():
        sql = _PG_LEASE_BY_GROUP_SQL if _by_group(kinds, exclude_sources) else _PG_LEASE_SQL
        claimed = [row[:5] for row in _claim(sql, _lease_params(kinds, max, lease_duration, exclude_sources))]
    else:
        claimed = _lease_sqlite(kinds, max, lease_duration, exclude_sources)
    return _decode_leases(claimed)


def _lease_params(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> dict[str, Any]:
    return {
        "any_kind": kinds is None,
        "kinds": pg_text_array(kinds or ()),
        "max": max,
        "duration": lease_duration,
        "excluded": pg_text_array(sorted(exclude_sources)),
    }


def _claim(sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run a claim statement with `_ORDERED_WALK` around it; its rows, claimed ones in lease order.

    A claimed row ends with its `ord`; rows with a NULL `ord` (the acks riding
    on it) come last.
    """
    with connection.cursor() as cursor:
        rows = fetch_walking_in_order(cursor, sql, params)
    # UPDATE ... RETURNING does not promise the walk's order: `ord` restores it.
    rows.sort(key=lambda row: (row[-1] is None, row[-1] or 0))
    return rows


def fetch_walking_in_order(cursor: Any, sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run `sql` on `cursor` with `_ORDERED_WALK` around it and return its rows (an EXPLAIN's too)."""
    cursor.execute(f"{_ORDERED_WALK}{sql}{_ORDERED_WALK_END}", params)
    for _ in _ORDERED_WALK_SETTINGS:  # past the SETs' results
        cursor.nextset()
    return cursor.fetchall()


def pg_array(values: Iterable[uuid.UUID | int]) -> str:
    """A PostgreSQL array literal of uuids or integers, for a `%s::uuid[]` or `%s::bigint[]` parameter.

    Django's cursor binds client-side and quotes a list element by element;
    for the ids of every ack and lease that was a fifth of the loop's CPU.
    Neither an integer nor a uuid's 32 hex digits (which PostgreSQL reads as
    a uuid) need quoting inside an array.
    """
    return "{" + ",".join(v.hex if isinstance(v, uuid.UUID) else str(v) for v in values) + "}"


def pg_text_array(values: Iterable[str]) -> str:
    """A PostgreSQL array literal of strings, for a `%s::text[]` parameter: each element quoted and escaped."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def _lease_sqlite(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> list[tuple]:
    now = timezone.now()
    leasable = Q(state=JobState.PENDING) | Q(state=JobState.RUNNING, leased_until__lt=now)
    with transaction.atomic():  # BEGIN IMMEDIATE: holds the write lock from the first read
        candidates = Job.objects.filter(leasable, scheduled_at__lte=now)
        if kinds is not None:
            candidates = candidates.filter(kind__in=kinds)
        if exclude_sources:
            candidates = candidates.filter(
                Q(payload__source_id__isnull=True) | ~Q(payload__source_id__in=list(exclude_sources))
            )
        ids = list(candidates.order_by("scheduled_at", "created_at").values_list("id", flat=True)[:max])
        if not ids:
            return []
        Job.objects.filter(leasable, id__in=ids).update(
            state=JobState.RUNNING,
            attempts=F("attempts") + 1,
            lease_generation=F("lease_generation") + 1,
            leased_until=now + lease_duration,
            updated_at=now,
        )
        rows = {
            r[0]: r
            for r in Job.objects.filter(id__in=ids).values_list(
                "id", "payload", "attempts", "max_attempts", "lease_generation"
            )
        }
    return [rows[i] for i in ids if i in rows]


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
    _guarded(job_id, generation).update(
        state=JobState.DEAD, last_error=f"undecodable payload: {error}", leased_until=None, updated_at=Now()
    )


# --- guarded transitions -----------------------------------------------------------


def _by_id_while_running(job_id: uuid.UUID) -> QuerySet[Job]:
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


def _guarded(job_id: uuid.UUID, generation: int) -> QuerySet[Job]:
    return _by_id_while_running(job_id).filter(lease_generation=generation)


def _warn_stale(op: str, lease_: Lease) -> None:
    logger.warning(
        "%s: lease no longer current (generation mismatch: released, reclaimed or re-leased); "
        "skipping update job=%s generation=%s",
        op,
        lease_.id,
        lease_.lease_generation,
    )


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
            _warn_stale("holding", lease_)
        yield current


def renew(lease_: Lease, lease_duration: timedelta) -> bool:
    """Heartbeat: extend a still-owned lease. False means it was lost; stop that job."""
    updated = _guarded(lease_.id, lease_.lease_generation).update(
        leased_until=_now_plus(lease_duration), updated_at=Now()
    )
    return updated == 1


# `state || ''`: see `_by_id_while_running`; the join must probe the primary key.
_PG_RENEW_MANY_SQL = """
UPDATE crawler_jobs j
   SET leased_until = statement_timestamp() + %s, updated_at = statement_timestamp()
  FROM unnest(%s::uuid[], %s::bigint[]) AS l(id, generation)
 WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
RETURNING j.id
"""


def renew_many(leases: Sequence[Lease], lease_duration: timedelta) -> set[uuid.UUID]:
    """`renew` for every lease a worker holds, in one statement; returns the ids still held.

    Each row keeps `renew`'s `(id, generation, running)` guard, so a lease
    that was released or re-leased meanwhile is left out of the answer and its
    worker drops that job, while the others are extended. One heartbeat costs
    one round trip whatever the worker's concurrency.
    """
    if not leases:
        return set()
    if _is_postgres():
        with connection.cursor() as cursor:
            params: list[Any] = [
                lease_duration,
                pg_array(lease_.id for lease_ in leases),
                pg_array(lease_.lease_generation for lease_ in leases),
            ]
            cursor.execute(_PG_RENEW_MANY_SQL, params)
            return {row[0] for row in cursor.fetchall()}
    with transaction.atomic():
        return {lease_.id for lease_ in leases if renew(lease_, lease_duration)}


def ack_done(lease_: Lease) -> bool:
    """Mark done. A stale lease updates nothing, logs a warning and returns False."""
    updated = _guarded(lease_.id, lease_.lease_generation).update(
        state=JobState.DONE, leased_until=None, updated_at=Now()
    )
    if not updated:
        _warn_stale("ack_done", lease_)
    return updated == 1


# `state || ''`: see `_by_id_while_running`; the join must probe the primary key.
_PG_ACK_DONE_MANY_SQL = """
UPDATE crawler_jobs j
   SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
  FROM unnest(%s::uuid[], %s::bigint[]) AS l(id, generation)
 WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
RETURNING j.id
"""


def ack_done_many(leases: Sequence[Lease]) -> int:
    """`ack_done` for a batch in one statement; returns how many were still current.

    Each row keeps its own `(id, generation, running)` guard, so a stale lease
    in the batch steps aside (and is logged) while the rest complete. One
    round trip and one commit for the batch instead of one per job.
    """
    if not leases:
        return 0
    if _is_postgres():
        with connection.cursor() as cursor:
            cursor.execute(
                _PG_ACK_DONE_MANY_SQL,
                [pg_array(lease_.id for lease_ in leases), pg_array(lease_.lease_generation for lease_ in leases)],
            )
            acked = {row[0] for row in cursor.fetchall()}
    else:
        acked = set()
        with transaction.atomic():
            for lease_ in leases:
                if _guarded(lease_.id, lease_.lease_generation).update(
                    state=JobState.DONE, leased_until=None, updated_at=Now()
                ):
                    acked.add(lease_.id)
    for lease_ in leases:
        if lease_.id not in acked:
            _warn_stale("ack_done_many", lease_)
    return len(acked)


# The ack of `ack_done_many` and the claim of `lease` in one statement and one
# commit. The rows being acked are left out of the claim: a done job whose
# lease just lapsed would otherwise be updated by both halves at once.
def _ack_and_lease_sql(candidates: str) -> str:
    return f"""
WITH acked AS (
    UPDATE crawler_jobs j
       SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
      FROM unnest(%(ack_ids)s::uuid[], %(ack_generations)s::bigint[]) AS l(id, generation)
     WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
    RETURNING j.id
), leased AS ({candidates}
), claimed AS ({_CLAIM_LEASED}
)
SELECT id, payload, attempts, max_attempts, lease_generation, ord FROM claimed
UNION ALL
SELECT id, NULL, NULL, NULL, NULL, NULL FROM acked"""


_NOT_BEING_ACKED = " AND id <> ALL(%(ack_ids)s::uuid[])"
_PG_ACK_AND_LEASE_SQL = _ack_and_lease_sql(_lease_candidates(_NOT_BEING_ACKED))
_PG_ACK_AND_LEASE_BY_GROUP_SQL = _ack_and_lease_sql(_lease_candidates_by_group(_NOT_BEING_ACKED))


def ack_done_many_and_lease(
    done: Sequence[Lease],
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    *,
    exclude_sources: Collection[str] = (),
) -> tuple[int, list[Lease]]:
    """`ack_done_many(done)` then `lease(...)`, in one round trip on PostgreSQL; (acked, new leases).

    A worker that frees slots by finishing jobs fills them again at once, so
    the acks ride on the lease statement instead of costing a commit of their
    own. Each ack keeps its `(id, generation, running)` guard and the claim
    keeps every property of `lease`.
    """
    if not _is_postgres() or not done or max <= 0:
        acked = ack_done_many(done)
        return acked, lease(kinds, max, lease_duration, exclude_sources=exclude_sources)
    params = {
        **_lease_params(kinds, max, lease_duration, exclude_sources),
        "ack_ids": pg_array(lease_.id for lease_ in done),
        "ack_generations": pg_array(lease_.lease_generation for lease_ in done),
    }
    sql = _PG_ACK_AND_LEASE_BY_GROUP_SQL if _by_group(kinds, exclude_sources) else _PG_ACK_AND_LEASE_SQL
    rows = _claim(sql, params)
    acked_ids = {row[0] for row in rows if row[5] is None}
    for lease_ in done:
        if lease_.id not in acked_ids:
            _warn_stale("ack_done_many_and_lease", lease_)
    return len(acked_ids), _decode_leases([row[:5] for row in rows if row[5] is not None])


def ack_failed(lease_: Lease, error: str) -> bool:
    """Record a failed attempt: dead at `max_attempts`, else pending again after a jittered backoff."""
    guarded = _guarded(lease_.id, lease_.lease_generation)
    if lease_.attempts >= lease_.max_attempts:
        updated = guarded.update(state=JobState.DEAD, last_error=error, leased_until=None, updated_at=Now())
    else:
        updated = guarded.update(
            state=JobState.PENDING,
            last_error=error,
            leased_until=None,
            scheduled_at=_now_plus(backoff_for(lease_.attempts)),
            updated_at=Now(),
        )
    if not updated:
        _warn_stale("ack_failed", lease_)
    return updated == 1


def ack_dead(lease_: Lease, error: str) -> bool:
    """Dead-letter now, whatever the attempt count: the failure is deterministic (`PermanentError`)."""
    updated = _guarded(lease_.id, lease_.lease_generation).update(
        state=JobState.DEAD, last_error=error, leased_until=None, updated_at=Now()
    )
    if not updated:
        _warn_stale("ack_dead", lease_)
    return updated == 1


def defer(lease_: Lease, until: datetime, reason: str) -> bool:
    """Back to pending at `until` without burning an attempt (the source said Retry-After).

    Bounded by CRAWLER_MAX_DEFERRALS: past it the job is dead-lettered with a
    reason saying so, so a source that always answers "later" cannot keep a
    job alive forever.
    """
    limit = settings.CRAWLER_MAX_DEFERRALS
    guarded = _guarded(lease_.id, lease_.lease_generation)
    updated = guarded.filter(deferrals__lt=limit).update(
        **_REFUND, deferrals=F("deferrals") + 1, last_error=reason, scheduled_at=until, updated_at=Now()
    )
    if not updated:
        updated = guarded.update(
            state=JobState.DEAD,
            last_error=f"deferred {limit} times (CRAWLER_MAX_DEFERRALS); last: {reason}",
            leased_until=None,
            updated_at=Now(),
        )
    if not updated:
        _warn_stale("defer", lease_)
    return updated == 1


_REFUND = {
    "state": JobState.PENDING,
    "leased_until": None,
    "attempts": Greatest(Value(0), F("attempts") - 1),
    "lease_generation": F("lease_generation") + 1,
}


def release(lease_: Lease) -> bool:
    """Give a held lease back without burning an attempt (shutdown, session expired)."""
    updated = _guarded(lease_.id, lease_.lease_generation).update(**_REFUND, updated_at=Now())
    if updated:
        announce([lease_.kind])
    else:
        _warn_stale("release", lease_)
    return updated == 1


def release_unowned(job_id: uuid.UUID) -> bool:
    """Drop a running lease by id alone (force-analyze, ops tools).

    Bumps the generation so the in-flight worker's eventual ack is a no-op,
    and refunds the attempt: an operator's click is not the job's failure.
    """
    updated = _by_id_while_running(job_id).update(**_REFUND, updated_at=Now())
    if updated:
        announce(Job.objects.filter(id=job_id).values_list("kind", flat=True))
    else:
        logger.warning("release_unowned: job=%s is not running (already finished or never leased); skipping", job_id)
    return updated == 1


def announce(kinds: Iterable[str]) -> None:
    """Wake idle workers of `kinds`: a job became pending outside `enqueue` (release, requeue).

    PostgreSQL only (delivered at commit); on SQLite idle workers poll.
    """
    if not _is_postgres():
        return
    with connection.cursor() as cursor:
        for kind in sorted(set(kinds)):
            cursor.execute("SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, kind])


def upgrade_pending_payload(job_id: uuid.UUID, payload: Payload) -> bool:
    """Replace a still-pending job's payload with `payload` (same kind and dedup key); True if it was.

    For flags that change what the job does, not which job it is (force-analyze
    turning `force` on): a compare-and-set on `state='pending'`, so a job a
    worker leased meanwhile is left alone and the caller looks again.
    """
    updated = Job.objects.filter(
        id=job_id, state=JobState.PENDING, kind=payload.kind, dedup_key=payload.dedup_key()
    ).update(payload=payload.to_json(), updated_at=Now())
    return updated == 1


def reclaim_orphaned() -> int:
    """At worker boot: return running rows whose lease already expired to pending, attempt refunded.

    Safe beside live peers because a heartbeating worker's lease is never
    expired; this only does eagerly what `lease` would do lazily, minus the
    attempt a crash would otherwise cost.
    """
    return Job.objects.filter(state=JobState.RUNNING, leased_until__lt=Now()).update(**_REFUND, updated_at=Now())


def reap_done(retention_days: int) -> int:
    """Delete done jobs older than `retention_days`; 0 disables the reaper."""
    if retention_days <= 0:
        return 0
    cutoff = timezone.now() - timedelta(days=retention_days)
    deleted, _ = Job.objects.filter(state=JobState.DONE, updated_at__lt=cutoff).delete()
    return deleted


def withdraw_pending(jobs: QuerySet[Job]) -> list[uuid.UUID]:
    """Delete the jobs among `jobs` that are still pending (nobody wants their work any more); their chapter ids.

    For a source switched to downloading followed mangas only. One statement,
    guarded on `state = 'pending'`: a job a worker leased meanwhile finishes,
    and a chapter id comes back only for a job this call removed.
    """
    chosen, params = jobs.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM crawler_jobs WHERE state = 'pending' AND id IN ({chosen}) RETURNING chapter_id", params
        )
        return [row[0] for row in cursor.fetchall() if row[0] is not None]
