-- The queue's statements, each written once, whole and named; `jobs.queries` reads this file once.
--
-- A block starts with `-- name: NAME`. `-- dialect: postgresql` or `-- dialect: sqlite` marks a variant
-- for one database (a block without it serves both); the variants of one statement stand next to each
-- other. `-- planner off: a, b` runs the PostgreSQL statement with those planner settings off for it
-- alone (SET LOCAL before, put back after, also inside a transaction). `-- same as: OTHER` makes the
-- block the named statement's variant for its dialect. A SQLite variant may hold several statements
-- (each ending in `;` at the end of a line): they run in one transaction and their rows are joined.
-- Parameters are named (`%(max)s`); lists arrive as the dialect's array (`jobs.queries.array`): a
-- PostgreSQL array literal, a JSON array on SQLite (uuids as the 32 hex digits Django stores there).
-- Times: PostgreSQL reads its own clock (statement_timestamp(), what Django's Now() compiles to), so
-- hosts with drifting clocks agree; SQLite is one file on one machine and is given `%(now)s`.


-- name: enqueue_chunk
-- dialect: postgresql
-- One statement inserts a whole chunk. `ON CONFLICT DO NOTHING` against the partial unique constraint
-- makes each row's dedup race-free (also between two rows of the same chunk). created_at is the lease
-- tie-break, so it grows row by row even inside one transaction: clock_timestamp() plus the row's
-- ordinal in microseconds keeps chapter-number enqueue order through to lease order. One NOTIFY per
-- kind inserted rides in the same round trip and is delivered at commit (`jobs.wakeup`).
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
SELECT NULL, pg_notify('crawler_jobs', kind) FROM (SELECT DISTINCT kind FROM ins) AS inserted_kinds

-- name: enqueue_chunk
-- dialect: sqlite
-- The same insert; each row carries its created_at (this process's clock plus its ordinal in
-- microseconds), since SQLite's own clock has milliseconds only. Idle workers poll: no NOTIFY.
INSERT INTO crawler_jobs (id, kind, payload, state, attempts, max_attempts, lease_generation, last_error,
                          dedup_key, source_id, manga_id, chapter_id, page_id, created_at, updated_at, scheduled_at)
SELECT replace(r.value ->> 'id', '-', ''), r.value ->> 'kind', r.value -> 'payload', 'pending', 0, %(max_attempts)s, 0,
       '', r.value ->> 'dedup_key', r.value ->> 'source_id', replace(r.value ->> 'manga_id', '-', ''),
       replace(r.value ->> 'chapter_id', '-', ''), replace(r.value ->> 'page_id', '-', ''),
       r.value ->> 'created_at', %(now)s, COALESCE(%(scheduled_at)s, %(now)s)
  FROM json_each(%(rows)s) AS r
 WHERE true
 ORDER BY r.key
ON CONFLICT DO NOTHING
RETURNING id, NULL


-- name: lease_jobs
-- dialect: postgresql
-- planner off: enable_sort, jit
-- The done acks of a worker's step and the claim of its free slots, in one statement and one commit
-- (a plain `lease` acks nothing: empty arrays). Acks keep the `(id, generation, running)` guard; the
-- rows being acked are left out of the claim (a done job whose lease just lapsed would otherwise be
-- updated by both halves). Claimed: leasable (pending, or running with a lapsed lease), due, of the
-- kinds, not of an excluded source, locked skipping others' locks, the oldest `max` in
-- (scheduled_at, created_at) order; `ord` numbers them in that order (UPDATE ... RETURNING does not
-- keep it), acked rows come back with a NULL `ord`. `state || ''` keeps the acks' planner on the
-- primary key (`jobs.guards.by_id_while_running`).
-- Planner: the claim must walk crawler_jobs_leasable_idx in order and stop after `max` rows. Under
-- stale statistics (a burst of enqueues the last ANALYZE never saw) the planner instead fetches every
-- pending row through crawler_jobs_counted_idx and sorts them: 16 ms a lease at 10,000 pending
-- against under 1 ms. With sorts off the index walk is the one plan without a sort; JIT goes off with
-- them, since a disabled node's cost must never look worth compiling (that took 200 ms).
WITH acked AS (
    UPDATE crawler_jobs j
       SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
      FROM unnest(%(ack_ids)s::uuid[], %(ack_generations)s::bigint[]) AS l(id, generation)
     WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
    RETURNING j.id
), leased AS (
    SELECT id, row_number() OVER () AS ord FROM (
        SELECT id FROM crawler_jobs
         WHERE (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
           AND scheduled_at <= statement_timestamp()
           AND (%(any_kind)s OR kind = ANY(%(kinds)s::text[]))
           AND source_id <> ALL(%(excluded)s::text[])
           AND id <> ALL(%(ack_ids)s::uuid[])
         ORDER BY scheduled_at, created_at
         LIMIT %(max)s
         FOR UPDATE SKIP LOCKED) AS walked
), claimed AS (
    UPDATE crawler_jobs j
       SET state = 'running', attempts = j.attempts + 1, lease_generation = j.lease_generation + 1,
           leased_until = statement_timestamp() + %(duration)s, updated_at = statement_timestamp()
      FROM leased l
     WHERE j.id = l.id
    RETURNING j.id, j.payload, j.attempts, j.max_attempts, j.lease_generation, l.ord
)
SELECT id, payload, attempts, max_attempts, lease_generation, ord FROM claimed
UNION ALL
SELECT id, NULL, NULL, NULL, NULL, NULL FROM acked

-- name: lease_jobs
-- dialect: sqlite
-- The same acks and claim, one statement each in one transaction. SQLite has no row locks to skip:
-- every transaction is BEGIN IMMEDIATE, which holds the write lock from the first statement, so
-- leasers take turns. `ord` is the claim's (scheduled_at, created_at), which sorts as text.
UPDATE crawler_jobs
   SET state = 'done', leased_until = NULL, updated_at = %(now)s
  FROM json_each(%(ack_ids)s) AS i JOIN json_each(%(ack_generations)s) AS g ON g.key = i.key
 WHERE crawler_jobs.id = i.value AND crawler_jobs.lease_generation = g.value AND crawler_jobs.state = 'running'
RETURNING id, NULL, NULL, NULL, NULL, NULL;
UPDATE crawler_jobs
   SET state = 'running', attempts = attempts + 1, lease_generation = lease_generation + 1,
       leased_until = %(leased_until)s, updated_at = %(now)s
 WHERE id IN (
    SELECT id FROM crawler_jobs
     WHERE (state = 'pending' OR (state = 'running' AND leased_until < %(now)s))
       AND scheduled_at <= %(now)s
       AND (%(any_kind)s OR kind IN (SELECT value FROM json_each(%(kinds)s)))
       AND source_id NOT IN (SELECT value FROM json_each(%(excluded)s))
       AND id NOT IN (SELECT value FROM json_each(%(ack_ids)s))
     ORDER BY scheduled_at, created_at
     LIMIT %(max)s)
RETURNING id, payload, attempts, max_attempts, lease_generation, scheduled_at || ' ' || created_at


-- name: lease_jobs_by_group
-- dialect: postgresql
-- planner off: enable_sort, jit
-- `lease_jobs` (no acks) for a lease that leaves sources out or names kinds: only eligible rows are
-- read. The in-flight (source, kind) groups are found by skipping through
-- crawler_jobs_source_lease_idx (one probe per group, however many jobs it holds); each eligible group
-- is walked in (scheduled_at, created_at) order for at most `max` rows, and the oldest `max` of those
-- are claimed. A million pending jobs of an excluded source are never read: the other sources' lease
-- costs what it would on an empty queue (273-400 ms against 4.8 ms at 1M pending, bench/big_site.py).
-- Rows one group locks beyond the `max` claimed are freed when the statement commits.
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
), walked AS (
    SELECT c.id, c.scheduled_at, c.created_at FROM eligible g CROSS JOIN LATERAL (
        SELECT id, scheduled_at, created_at FROM crawler_jobs
         WHERE source_id = g.source_id AND kind = g.kind
           AND (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
           AND scheduled_at <= statement_timestamp()
         ORDER BY scheduled_at, created_at
         LIMIT %(max)s
         FOR UPDATE SKIP LOCKED) AS c
), leased AS (
    SELECT id, row_number() OVER (ORDER BY scheduled_at, created_at) AS ord FROM (
        SELECT id, scheduled_at, created_at FROM walked ORDER BY scheduled_at, created_at LIMIT %(max)s
    ) AS oldest
)
UPDATE crawler_jobs j
   SET state = 'running', attempts = j.attempts + 1, lease_generation = j.lease_generation + 1,
       leased_until = statement_timestamp() + %(duration)s, updated_at = statement_timestamp()
  FROM leased l
 WHERE j.id = l.id
RETURNING j.id, j.payload, j.attempts, j.max_attempts, j.lease_generation, l.ord

-- name: lease_jobs_by_group
-- dialect: sqlite
-- same as: lease_jobs


-- name: lease_jobs_round_the_sources
-- dialect: postgresql
-- planner off: enable_sort, jit
-- The worker loop's step: `lease_jobs`' acks with `lease_jobs_by_group`'s walk, and the claim goes
-- round the sources. A source's n-th candidate ranks after every source's (n-1)-th, and each job of
-- the source already running (in any worker; leases alive, the ones acked here left out) counts as one
-- of its candidates. So a worker hands a source with nothing running its next job before a second one
-- of a source that has one, whichever was queued first: sources queued late do not wait behind the
-- early ones' backlogs. Within a source, and between jobs of one rank, the order stays (scheduled_at,
-- created_at); jobs of no source ("") are one group of equals. Running jobs are counted through
-- crawler_jobs_counted_idx: a probe reads the running rows, never the pending backlog (`source_id ||
-- ''` keeps the planner off crawler_jobs_source_lease_idx, whose walk would read a source's backlog).
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
), running AS (
    SELECT s.source_id, (
        SELECT count(*) FROM crawler_jobs r
         WHERE r.state = 'running' AND r.source_id || '' = s.source_id
           AND r.leased_until >= statement_timestamp() AND r.id <> ALL(%(ack_ids)s::uuid[])) AS jobs
      FROM (SELECT DISTINCT source_id FROM eligible) AS s
), walked AS (
    SELECT c.id, c.scheduled_at, c.created_at, g.source_id FROM eligible g CROSS JOIN LATERAL (
        SELECT id, scheduled_at, created_at FROM crawler_jobs
         WHERE source_id = g.source_id AND kind = g.kind
           AND (state = 'pending' OR (state = 'running' AND leased_until < statement_timestamp()))
           AND scheduled_at <= statement_timestamp() AND id <> ALL(%(ack_ids)s::uuid[])
         ORDER BY scheduled_at, created_at
         LIMIT %(max)s
         FOR UPDATE SKIP LOCKED) AS c
), ranked AS (
    SELECT w.id, w.scheduled_at, w.created_at,
           r.jobs + row_number() OVER (PARTITION BY w.source_id ORDER BY w.scheduled_at, w.created_at) AS turn
      FROM walked w JOIN running r USING (source_id)
), leased AS (
    SELECT id, row_number() OVER (ORDER BY turn, scheduled_at, created_at) AS ord FROM (
        SELECT id, turn, scheduled_at, created_at FROM ranked ORDER BY turn, scheduled_at, created_at LIMIT %(max)s
    ) AS first_turns
), acked AS (
    UPDATE crawler_jobs j
       SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
      FROM unnest(%(ack_ids)s::uuid[], %(ack_generations)s::bigint[]) AS l(id, generation)
     WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
    RETURNING j.id
), claimed AS (
    UPDATE crawler_jobs j
       SET state = 'running', attempts = j.attempts + 1, lease_generation = j.lease_generation + 1,
           leased_until = statement_timestamp() + %(duration)s, updated_at = statement_timestamp()
      FROM leased l
     WHERE j.id = l.id
    RETURNING j.id, j.payload, j.attempts, j.max_attempts, j.lease_generation, l.ord
)
SELECT id, payload, attempts, max_attempts, lease_generation, ord FROM claimed
UNION ALL
SELECT id, NULL, NULL, NULL, NULL, NULL FROM acked

-- name: lease_jobs_round_the_sources
-- dialect: sqlite
-- same as: lease_jobs


-- name: ack_done
-- dialect: postgresql
-- Mark done every row still held by its `(id, generation)`; the ids acked. A stale lease in the batch
-- matches nothing and steps aside while the rest complete.
UPDATE crawler_jobs j
   SET state = 'done', leased_until = NULL, updated_at = statement_timestamp()
  FROM unnest(%(ack_ids)s::uuid[], %(ack_generations)s::bigint[]) AS l(id, generation)
 WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
RETURNING j.id

-- name: ack_done
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'done', leased_until = NULL, updated_at = %(now)s
  FROM json_each(%(ack_ids)s) AS i JOIN json_each(%(ack_generations)s) AS g ON g.key = i.key
 WHERE crawler_jobs.id = i.value AND crawler_jobs.lease_generation = g.value AND crawler_jobs.state = 'running'
RETURNING id


-- name: requeue_dead
-- dialect: postgresql
-- The dead jobs `ids` (every one with `every`) back to pending, one statement for a whole scope
-- (10,000 dead jobs: one round trip instead of three per job). `ranked` numbers each key's dead rows
-- newest first; the newest is revived (fresh attempts, generation bumped) unless a job with its key is
-- in flight, the older ones are marked failed (superseded) so the dead list empties. A key is revived
-- once per statement, so the in-flight constraint holds unless a producer enqueues the same key
-- meanwhile (the caller retries).
-- Rows: (kind, revived) for the wake-ups.
WITH ranked AS (
    SELECT id, row_number() OVER (PARTITION BY COALESCE(dedup_key, id::text)
                                  ORDER BY updated_at DESC, created_at DESC) AS newest
      FROM crawler_jobs
     WHERE state = 'dead' AND (%(every)s OR id = ANY(%(ids)s::uuid[]))
), superseded AS (
    UPDATE crawler_jobs j SET state = 'failed', updated_at = statement_timestamp()
      FROM ranked r
     WHERE j.id = r.id AND r.newest > 1 AND j.state = 'dead'
), revived AS (
    UPDATE crawler_jobs j
       SET state = 'pending', attempts = 0, deferrals = 0, leased_until = NULL,
           scheduled_at = statement_timestamp(), lease_generation = j.lease_generation + 1,
           updated_at = statement_timestamp()
      FROM ranked r
     WHERE j.id = r.id AND r.newest = 1 AND j.state = 'dead'
       AND NOT EXISTS (SELECT 1 FROM crawler_jobs t
                        WHERE t.dedup_key = j.dedup_key AND t.state IN ('pending', 'running'))
    RETURNING j.kind
)
SELECT kind, count(*) FROM revived GROUP BY kind

-- name: requeue_dead
-- dialect: sqlite
-- The same, superseded rows first: a data-modifying CTE is PostgreSQL's, so it is two statements in
-- one transaction (superseding touches no key the revival looks at).
UPDATE crawler_jobs SET state = 'failed', updated_at = %(now)s
 WHERE state = 'dead' AND id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY COALESCE(dedup_key, id)
                                      ORDER BY updated_at DESC, created_at DESC) AS newest
          FROM crawler_jobs
         WHERE state = 'dead' AND (%(every)s OR id IN (SELECT value FROM json_each(%(ids)s)))) AS ranked
     WHERE newest > 1);
UPDATE crawler_jobs
   SET state = 'pending', attempts = 0, deferrals = 0, leased_until = NULL, scheduled_at = %(now)s,
       lease_generation = lease_generation + 1, updated_at = %(now)s
 WHERE state = 'dead' AND (%(every)s OR id IN (SELECT value FROM json_each(%(ids)s)))
   AND NOT EXISTS (SELECT 1 FROM crawler_jobs t
                    WHERE t.dedup_key = crawler_jobs.dedup_key AND t.state IN ('pending', 'running'))
RETURNING kind, 1


-- name: announce
-- dialect: postgresql
-- Wake idle workers of one kind (`jobs.wakeup`), delivered at commit.
SELECT pg_notify('crawler_jobs', %(kind)s)


-- name: count_jobs
-- dialect: postgresql
-- planner off: enable_seqscan, enable_bitmapscan, jit
-- The dashboard's counts: per counted state (a literal, so the partial index crawler_jobs_counted_idx
-- applies) and kind, the jobs counted by an index-only walk that stops after `limit` rows. A million
-- pending jobs used to be a parallel scan on every status request (351 ms). A busy queue's visibility
-- map is stale, so an index-only walk is priced as a heap fetch a row and the planner would count a big
-- group "until limit match" by sequential scan, reading every row stored before them (362 ms at 10k
-- mangas against 2.8 ms, bench/big_site.py): with sequential and bitmap scans off the bounded walk is
-- the plan left. Rows: (kind, state, jobs up to `limit`).
SELECT k.kind, 'pending',
       (SELECT count(*) FROM (SELECT 1 FROM crawler_jobs j WHERE j.state = 'pending' AND j.kind = k.kind
                              LIMIT %(limit)s) AS capped)
  FROM unnest(%(kinds)s::text[]) AS k(kind)
UNION ALL
SELECT k.kind, 'running',
       (SELECT count(*) FROM (SELECT 1 FROM crawler_jobs j WHERE j.state = 'running' AND j.kind = k.kind
                              LIMIT %(limit)s) AS capped)
  FROM unnest(%(kinds)s::text[]) AS k(kind)
UNION ALL
SELECT k.kind, 'dead',
       (SELECT count(*) FROM (SELECT 1 FROM crawler_jobs j WHERE j.state = 'dead' AND j.kind = k.kind
                              LIMIT %(limit)s) AS capped)
  FROM unnest(%(kinds)s::text[]) AS k(kind)

-- name: count_jobs
-- dialect: sqlite
-- Exact counts of every kind: the embedded database holds a small library.
SELECT kind, state, count(*) FROM crawler_jobs WHERE state IN ('pending', 'running', 'dead') GROUP BY kind, state

-- name: estimate_jobs
-- dialect: postgresql
-- The planner's row estimate for one (kind, state) group: statistics, no rows read.
EXPLAIN (FORMAT JSON) SELECT 1 FROM crawler_jobs WHERE state = %(state)s AND kind = %(kind)s


-- The writes on one held lease. Each matches `(id, lease_generation, state = 'running')` and its row
-- count is the answer: a lease released, reclaimed or re-leased meanwhile carries an older generation,
-- so its late write matches nothing and steps aside (`jobs.guards.warn_stale`). `state || ''` keeps the
-- planner on the primary key: crawler_jobs_counted_idx holds a dead 'running' entry for every job
-- leased since the last vacuum, and a plain `state = 'running'` would walk them all.

-- name: renew_leases
-- dialect: postgresql
-- The heartbeat: extend every lease still held, in one statement; the ids still held.
UPDATE crawler_jobs j
   SET leased_until = statement_timestamp() + %(duration)s, updated_at = statement_timestamp()
  FROM unnest(%(ids)s::uuid[], %(generations)s::bigint[]) AS l(id, generation)
 WHERE j.id = l.id AND j.lease_generation = l.generation AND j.state || '' = 'running'
RETURNING j.id

-- name: renew_leases
-- dialect: sqlite
UPDATE crawler_jobs
   SET leased_until = %(leased_until)s, updated_at = %(now)s
  FROM json_each(%(ids)s) AS i JOIN json_each(%(generations)s) AS g ON g.key = i.key
 WHERE crawler_jobs.id = i.value AND crawler_jobs.lease_generation = g.value AND crawler_jobs.state = 'running'
RETURNING id

-- name: retry_later
-- dialect: postgresql
-- A failed attempt with attempts left: pending again after `duration` (the jittered backoff).
UPDATE crawler_jobs
   SET state = 'pending', last_error = %(error)s, leased_until = NULL,
       scheduled_at = statement_timestamp() + %(duration)s, updated_at = statement_timestamp()
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state || '' = 'running'
RETURNING id

-- name: retry_later
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'pending', last_error = %(error)s, leased_until = NULL, scheduled_at = %(leased_until)s,
       updated_at = %(now)s
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state = 'running'
RETURNING id

-- name: dead_letter
-- dialect: postgresql
-- The last attempt failed, the failure is deterministic, or the payload cannot be decoded: dead, with why.
UPDATE crawler_jobs
   SET state = 'dead', last_error = %(error)s, leased_until = NULL, updated_at = statement_timestamp()
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state || '' = 'running'
RETURNING id

-- name: dead_letter
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'dead', last_error = %(error)s, leased_until = NULL, updated_at = %(now)s
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state = 'running'
RETURNING id


-- Giving a lease back (release, defer, reclaim): pending again, the attempt refunded, the generation
-- bumped so a late write of the lease given back matches nothing.

-- name: defer
-- dialect: postgresql
-- Back to pending at `until` without burning an attempt (the source said Retry-After), while the job
-- has deferrals left (`limit`); past them it matches nothing and the caller dead-letters it.
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = GREATEST(0, attempts - 1),
       lease_generation = lease_generation + 1, deferrals = deferrals + 1, last_error = %(error)s,
       scheduled_at = %(until)s, updated_at = statement_timestamp()
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state || '' = 'running' AND deferrals < %(limit)s
RETURNING id

-- name: defer
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = max(0, attempts - 1),
       lease_generation = lease_generation + 1, deferrals = deferrals + 1, last_error = %(error)s,
       scheduled_at = %(until)s, updated_at = %(now)s
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state = 'running' AND deferrals < %(limit)s
RETURNING id

-- name: release
-- dialect: postgresql
-- A held lease given back (shutdown, session expired); its kind, to wake idle workers.
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = GREATEST(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = statement_timestamp()
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state || '' = 'running'
RETURNING kind

-- name: release
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = max(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = %(now)s
 WHERE id = %(id)s AND lease_generation = %(generation)s AND state = 'running'
RETURNING kind

-- name: release_unowned
-- dialect: postgresql
-- A running lease dropped by id alone (force-analyze, ops tools): the in-flight worker's ack becomes a
-- no-op, the attempt is refunded (an operator's click is not the job's failure); its kind.
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = GREATEST(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = statement_timestamp()
 WHERE id = %(id)s AND state || '' = 'running'
RETURNING kind

-- name: release_unowned
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = max(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = %(now)s
 WHERE id = %(id)s AND state = 'running'
RETURNING kind

-- name: reclaim_expired
-- dialect: postgresql
-- At worker boot: running rows whose lease already lapsed back to pending, attempt refunded. Safe beside
-- live peers: a heartbeating worker's lease never lapses; this does eagerly what the claim does lazily,
-- minus the attempt a crash would otherwise cost.
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = GREATEST(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = statement_timestamp()
 WHERE state = 'running' AND leased_until < statement_timestamp()

-- name: reclaim_expired
-- dialect: sqlite
UPDATE crawler_jobs
   SET state = 'pending', leased_until = NULL, attempts = max(0, attempts - 1),
       lease_generation = lease_generation + 1, updated_at = %(now)s
 WHERE state = 'running' AND leased_until < %(now)s

-- name: reap_done
-- The housekeeping purge: done jobs last written before `cutoff`.
DELETE FROM crawler_jobs WHERE state = 'done' AND updated_at < %(cutoff)s

-- name: notify_status
-- dialect: postgresql
-- A worker's status row changed (`jobs.worker.status.notify`): dashboards LISTENing on crawler_status
-- reread the rows. Delivered at commit.
SELECT pg_notify('crawler_status', %(detail)s)
