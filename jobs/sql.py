"""The hand-written PostgreSQL statements of the queue: only where the ORM's form was measured to cost.

Each queue operation has one implementation in the ORM (`jobs.queue`), which
SQLite runs and which is correct on PostgreSQL too. Three hot ones have a
PostgreSQL form here, used when `applies()`, each with the measurement that
keeps it:

- the claim (`lease`): one statement instead of the ORM's three (lock the
  candidates, update, read back) plus a commit, and the only form that can
  keep the planner on the ordered index walk under stale statistics
  (`_ORDERED_WALK_SETTINGS` below: 16 ms per lease at 10,000 pending without it,
  under 1 ms with it; `jobs/tests/test_queue_lease_plan.py`);
- the done acks of a step (`ack_done_many`): one statement for the batch
  instead of one guarded update per job; and when the step also has free
  slots to fill, those acks and the claim in one statement and one commit
  (`ack_done_many_and_lease`): without it the worker's no-op drain fell to
  0.41x PgQueuer's in the same run (445 against 1,093 jobs/s), below the
  floor, because every job then cost a commit for its ack and one for its
  successor's claim;
- the insert of an enqueue chunk (`insert_chunk`): one statement for 500
  rows with the NOTIFY riding on it, instead of an insert, a read-back of
  what went in and a NOTIFY.

bench/README.md ("Queue throughput", "One implementation per operation")
has the figures of both forms.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Collection, Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from jobs.payloads import Payload, source_of

NOTIFY_CHANNEL = "crawler_jobs"


def applies() -> bool:
    """Whether the statements here can run: the default database is PostgreSQL."""
    return connection.vendor == "postgresql"


# --- enqueue ---------------------------------------------------------------------

# One statement inserts a whole chunk. `ON CONFLICT DO NOTHING` against the
# partial unique constraint makes each row's dedup race-free (also between two
# rows of the same chunk). created_at is the lease tie-break, so it must grow
# row by row even inside one transaction: clock_timestamp() plus the row's
# ordinal in microseconds does, which keeps chapter-number enqueue order intact
# through to lease order. Other times are statement_timestamp(), what Django's
# Now() compiles to in every guarded update and what `lease` compares against,
# so hosts with drifting clocks agree. One NOTIFY per kind inserted rides in
# the same round trip and is delivered at commit.
ENQUEUE = f"""
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


def insert_chunk(rows: list[tuple[uuid.UUID, Payload]], scheduled_at: datetime | None, attempts: int) -> set[uuid.UUID]:
    """Insert a chunk of pending jobs in one statement (NOTIFYing their kinds); the ids that went in."""
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
        cursor.execute(ENQUEUE, params)
        return {row[0] for row in cursor.fetchall() if row[0] is not None}


# --- lease -----------------------------------------------------------------------


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
       AND source_id <> ALL(%(excluded)s::text[]){extra}
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

LEASE = f"WITH leased AS ({_lease_candidates()}\n){_CLAIM_LEASED}"


def _lease_candidates_by_group(extra: str = "", *, round_the_sources: bool = False, running_extra: str = "") -> str:
    """`_lease_candidates` for a lease that leaves sources out or names kinds: only eligible rows are read.

    The in-flight (source, kind) groups are found by skipping through
    crawler_jobs_source_lease_idx (one probe per group, however many jobs a
    group holds); each eligible group is then walked in (scheduled_at,
    created_at) order for at most `max` rows, and the oldest `max` of those
    are claimed. A million pending jobs of an excluded source are never read:
    the other sources' lease costs what it would on an empty queue (273-400 ms
    against 4.8 ms at 1M pending, bench/big_site.py). Rows one group locks
    beyond the `max` claimed are freed when the statement commits.

    `round_the_sources` (the worker loop's claim, `ACK_AND_LEASE_BY_GROUP`):
    the claim goes round the sources instead. A source's n-th candidate
    ranks after every source's (n-1)-th, and each job of the source already
    running (in any worker; leases alive, the ones being acked in this
    statement left out) counts as one of its candidates. So a worker hands a
    source with nothing running its next job before a second one of a
    source that has one, whichever was queued first: sources whose jobs were
    queued late are not left waiting behind the early ones' backlogs, and a
    source whose job just ended has its next one among the first candidates
    of the statement that acks it. Within a source, and between jobs of one
    rank, the order stays (scheduled_at, created_at); jobs of no source ("")
    are one group of equals, in queue order. The running jobs are counted
    through crawler_jobs_counted_idx: a probe reads the running rows, as many
    as there are job threads, never the pending backlog (`source_id || ''`
    keeps the planner off crawler_jobs_source_lease_idx, whose walk for a
    source's running rows would read its whole backlog).
    """
    groups = """
    WITH RECURSIVE in_flight AS (
        (SELECT source_id, kind FROM crawler_jobs
          WHERE state IN ('pending', 'running') ORDER BY source_id, kind LIMIT 1)
        UNION ALL
        SELECT later.source_id, later.kind FROM in_flight g CROSS JOIN LATERAL (
            SELECT source_id, kind FROM crawler_jobs
             WHERE state IN ('pending', 'running') AND (source_id, kind) > (g.source_id, g.kind)
             ORDER BY source_id, kind LIMIT 1) AS later
    ), eligible AS (
        SELECT g.source_id, g.kind FROM in_flight g
         WHERE (%(any_kind)s OR g.kind = ANY(%(kinds)s::text[])) AND g.source_id <> ALL(%(excluded)s::text[])
    )"""
    walked = f"""
    , walked AS (
        SELECT c.id, c.scheduled_at, c.created_at, g.source_id FROM eligible g CROSS JOIN LATERAL (
            SELECT id, scheduled_at, created_at FROM crawler_jobs
             WHERE source_id = g.source_id AND kind = g.kind
               AND (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
               AND scheduled_at <= statement_timestamp(){extra}
             ORDER BY scheduled_at, created_at
             LIMIT %(max)s
             FOR UPDATE SKIP LOCKED) AS c
    )"""
    if not round_the_sources:
        return f"""{groups}{walked}
    SELECT id, row_number() OVER (ORDER BY scheduled_at, created_at) AS ord FROM (
        SELECT id, scheduled_at, created_at FROM walked ORDER BY scheduled_at, created_at LIMIT %(max)s
    ) AS oldest"""
    return f"""{groups}, running AS (
        SELECT s.source_id, (
            SELECT count(*) FROM crawler_jobs r
             WHERE r.state = 'running' AND r.source_id || '' = s.source_id
               AND r.leased_until >= statement_timestamp(){running_extra}) AS jobs
          FROM (SELECT DISTINCT source_id FROM eligible) AS s
    ){walked}, ranked AS (
        SELECT w.id, w.scheduled_at, w.created_at,
               r.jobs + row_number() OVER (PARTITION BY w.source_id ORDER BY w.scheduled_at, w.created_at) AS turn
          FROM walked w JOIN running r USING (source_id)
    )
    SELECT id, row_number() OVER (ORDER BY turn, scheduled_at, created_at) AS ord FROM (
        SELECT id, turn, scheduled_at, created_at FROM ranked ORDER BY turn, scheduled_at, created_at LIMIT %(max)s
    ) AS first_turns"""


LEASE_BY_GROUP = f"WITH leased AS ({_lease_candidates_by_group()}\n){_CLAIM_LEASED}"


def by_group(kinds: list[str] | None, exclude_sources: Collection[str]) -> bool:
    """Whether a lease takes the per-group walk: it names kinds or leaves sources out."""
    return kinds is not None or bool(exclude_sources)


def lease_params(
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


def lease(
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> list[tuple]:
    """Claim up to `max` rows in one statement; (id, payload, attempts, max_attempts, generation) in lease order."""
    statement = LEASE_BY_GROUP if by_group(kinds, exclude_sources) else LEASE
    return [row[:5] for row in claim(statement, lease_params(kinds, max, lease_duration, exclude_sources))]


def claim(sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run a claim statement with sorts off around it (`_ORDERED_WALK_SETTINGS`); its rows, claimed ones in lease order.

    A claimed row ends with its `ord`; rows with a NULL `ord` (the acks of
    `ACK_AND_LEASE`) come last.
    """
    with connection.cursor() as cursor:
        rows = fetch_walking_in_order(cursor, sql, params)
    # UPDATE ... RETURNING does not promise the walk's order: `ord` restores it.
    rows.sort(key=lambda row: (row[-1] is None, row[-1] or 0))
    return rows


def fetch_walking_in_order(cursor: Any, sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run `sql` on `cursor` with sorts off around it and return its rows (an EXPLAIN's too)."""
    return _fetch_with_plans_off(cursor, sql, params, _ORDERED_WALK_SETTINGS)


# A capped count ("are there more than N?") must walk an index and stop after N + 1 rows. Where the
# visibility map is stale, as on a queue whose rows change all the time, an index-only walk is priced
# as a heap fetch a row, and the planner reads a big group by sequential scan instead, "until N + 1
# match": that reads every row stored before them, 362 ms for the dashboard's counts at 10k mangas
# against 2.8 ms (bench/big_site.py, after a few thousand rolled-back leases and requeues). With
# sequential and bitmap scans off for the statement, the bounded index walk is the plan left.
_INDEX_WALK_SETTINGS = ("enable_seqscan", "enable_bitmapscan", "jit")


def fetch_walking_an_index(cursor: Any, sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run `sql` on `cursor` with sequential and bitmap scans off around it; its rows (an EXPLAIN's too)."""
    return _fetch_with_plans_off(cursor, sql, params, _INDEX_WALK_SETTINGS)


def _fetch_with_plans_off(cursor: Any, sql: str, params: dict[str, Any], settings: tuple[str, ...]) -> list[tuple]:
    """`sql` with each planner setting off for it alone (SET LOCAL, put back after, also inside a transaction)."""
    start, end = _set_local_around(settings)
    cursor.execute(f"{start}{sql}{end}", params)
    for _ in settings:  # past the SETs' results
        cursor.nextset()
    return cursor.fetchall()


@functools.cache
def _set_local_around(settings: tuple[str, ...]) -> tuple[str, str]:
    """The statements before and after one that runs with `settings` off (built once: the claim is a hot path)."""
    start = "".join(f"SET LOCAL {name} = off;\n" for name in settings)
    end = "".join(f";\nSET LOCAL {name} TO DEFAULT" for name in settings)
    return start, end


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


# --- ack ---------------------------------------------------------------------------

# `state || ''`: see `jobs.guards.by_id_while_running`; the join must probe the primary key.
ACK_DONE_MANY = """
UPDATE crawler_jobs j
   SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
  FROM unnest(%s::uuid[], %s::bigint[]) AS l(id, generation)
 WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
RETURNING j.id
"""


def ack_done_many(ids: list[uuid.UUID], generations: list[int]) -> set[uuid.UUID]:
    """Mark done every row still held by its `(id, generation)`, in one statement; the ids acked."""
    with connection.cursor() as cursor:
        cursor.execute(ACK_DONE_MANY, [pg_array(ids), pg_array(generations)])
        return {row[0] for row in cursor.fetchall()}


# The done acks of a step and the claim of its free slots in one statement and
# one commit. The rows being acked are left out of the claim: a done job whose
# lease just lapsed would otherwise be updated by both halves at once.
def _ack_and_lease(candidates: str) -> str:
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
ACK_AND_LEASE = _ack_and_lease(_lease_candidates(_NOT_BEING_ACKED))
# The worker loop's claim: it goes round the sources (`_lease_candidates_by_group`).
ACK_AND_LEASE_BY_GROUP = _ack_and_lease(
    _lease_candidates_by_group(
        _NOT_BEING_ACKED, round_the_sources=True, running_extra=" AND r.id <> ALL(%(ack_ids)s::uuid[])"
    )
)


def ack_done_many_and_lease(
    ids: list[uuid.UUID],
    generations: list[int],
    kinds: list[str] | None,
    max: int,  # noqa: A002
    lease_duration: timedelta,
    exclude_sources: Collection[str],
) -> tuple[set[uuid.UUID], list[tuple]]:
    """Ack the rows still held by their `(id, generation)` and claim up to `max` others; (acked ids, claimed rows)."""
    params = {
        **lease_params(kinds, max, lease_duration, exclude_sources),
        "ack_ids": pg_array(ids),
        "ack_generations": pg_array(generations),
    }
    rows = claim(ACK_AND_LEASE_BY_GROUP if by_group(kinds, exclude_sources) else ACK_AND_LEASE, params)
    return {row[0] for row in rows if row[5] is None}, [row[:5] for row in rows if row[5] is not None]
