"""The reconcile pass: a list-only full walk that queues every manga we do not have.

The metadata pass can miss a manga to list drift (a title slips a pagination
slot during the slow detail walk). Reconcile walks the whole list cheaply
(refs only, no detail visit, no early stop) and set-diffs the walked keys
against `MangaSource`; a set-diff is immune to drift because a manga only has
to appear somewhere in the list. Each strictly missing key (a dropped
`MangaSource` row still counts as present) is queued as `sync_manga` with its
url and title, unless a pending, running or dead `sync_manga` job exists for
it: a manga whose detail page is gone stays dead instead of being retried on
every reconcile.

Keys are checked in batches of `BATCH_SIZE` (one indexed lookup query for
the batch, one for the job states of its missing keys, one multi-row insert),
so a 100k-manga catalog costs a few hundred queries, never one per ref nor
one query string holding every key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection

from catalog.models import MangaSource, Source
from crawler.payloads import SyncManga
from jobs.errors import JobCancelled
from jobs.models import Job, JobState
from jobs.queue import enqueue_many
from sources.base import Source as SourceAdapter
from sources.base import SourceMangaRef

logger = logging.getLogger(__name__)

BATCH_SIZE = 1000

# A dead job blocks re-enqueue on purpose (see the module docstring).
BLOCKING_JOB_STATES = (JobState.PENDING, JobState.RUNNING, JobState.DEAD)

Progress = Callable[[int, int], None]


@dataclass
class ReconcileStats:
    walked: int = 0
    missing: int = 0
    enqueued: int = 0
    skipped: int = 0


def run_reconcile(
    source_row: Source,
    source: SourceAdapter,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ReconcileStats:
    """Walk every list page of `source` and queue `sync_manga` for each missing manga.

    `progress(walked, enqueued)` is called after every list page.
    """
    stats = ReconcileStats()
    batch: dict[str, SourceMangaRef] = {}
    previous_keys: list[str] = []
    page = 1
    while True:
        if cancel is not None and cancel.is_set():
            raise JobCancelled(f"reconcile of {source_row.id} cancelled after {stats.walked} refs")
        refs, has_next = source.list_page(page)
        keys = [ref.key for ref in refs]
        if has_next and (not keys or keys == previous_keys):
            # The list stopped advancing (a list URL that ignores its page
            # number, anchors lost to markup drift): walking on would never end.
            logger.warning(
                "reconcile source=%s: list page %d is empty or repeats the last one; stopping", source_row.id, page
            )
            has_next = False
        previous_keys = keys
        for ref in refs:
            stats.walked += 1
            batch.setdefault(ref.key, ref)
            if len(batch) >= BATCH_SIZE:
                _flush(source_row, batch, stats)
                batch = {}
        if not has_next:
            break
        if progress is not None:
            progress(stats.walked, stats.enqueued)
        page += 1
    _flush(source_row, batch, stats)
    if progress is not None:
        progress(stats.walked, stats.enqueued)
    logger.info(
        "reconcile source=%s walked=%d missing=%d enqueued=%d skipped=%d",
        source_row.id,
        stats.walked,
        stats.missing,
        stats.enqueued,
        stats.skipped,
    )
    return stats


# On PostgreSQL each key is probed through a LATERAL subquery with LIMIT 1,
# which the planner cannot flatten into a hash join: one index lookup per key,
# so a batch costs O(batch) however large the catalog. A plain IN list lets
# the planner price 1,000 probes above one scan of every MangaSource row of
# the source, and each batch then costs O(catalog).
_PG_MISSING_SQL = f"""
SELECT k.key FROM unnest(%(keys)s::text[]) WITH ORDINALITY AS k(key, ord)
LEFT JOIN LATERAL (
    SELECT 1 AS hit FROM {MangaSource._meta.db_table} ms
     WHERE ms.source_id = %(source_id)s AND ms.source_manga_key = k.key
     LIMIT 1
) m ON true
WHERE m.hit IS NULL
ORDER BY k.ord
"""

# In-flight keys probe the partial unique index over pending/running rows;
# dead rows have no dedup index, but dead sync_manga rows are few and the
# (state, kind) index finds them.
_PG_BLOCKED_SQL = f"""
SELECT k.key FROM unnest(%(keys)s::text[]) AS k(key)
CROSS JOIN LATERAL (
    SELECT 1 FROM {Job._meta.db_table} j
     WHERE j.dedup_key = k.key AND j.state IN ('pending', 'running')
     LIMIT 1
) j
UNION
SELECT dedup_key FROM {Job._meta.db_table}
 WHERE state = 'dead' AND kind = %(kind)s AND dedup_key = ANY(%(keys)s)
"""


def missing_keys(source_row: Source, keys: list[str]) -> list[str]:
    """Keys with no `MangaSource` row on `source_row` at all (dropped rows count as present), in order."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_PG_MISSING_SQL, {"keys": keys, "source_id": source_row.id})
            return [row[0] for row in cursor.fetchall()]
    present = set(
        MangaSource.objects.filter(source=source_row, source_manga_key__in=keys).values_list(
            "source_manga_key", flat=True
        )
    )
    return [k for k in keys if k not in present]


def blocked_dedup_keys(dedup_keys: list[str]) -> set[str]:
    """Dedup keys that already have a pending, running or dead `sync_manga` job."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_PG_BLOCKED_SQL, {"keys": dedup_keys, "kind": SyncManga.kind})
            return {row[0] for row in cursor.fetchall()}
    rows = Job.objects.filter(kind=SyncManga.kind, state__in=BLOCKING_JOB_STATES, dedup_key__in=dedup_keys)
    return {key for key in rows.values_list("dedup_key", flat=True) if key}


def _flush(source_row: Source, batch: dict[str, SourceMangaRef], stats: ReconcileStats) -> None:
    if not batch:
        return
    missing = [
        SyncManga(source_id=source_row.id, source_manga_key=key, url=batch[key].url, title=batch[key].title)
        for key in missing_keys(source_row, list(batch))
    ]
    stats.missing += len(missing)
    blocked = blocked_dedup_keys([p.dedup_key() for p in missing]) if missing else set()
    wanted = [p for p in missing if p.dedup_key() not in blocked]
    # One transaction per batch: one commit for up to BATCH_SIZE inserts
    # instead of one each, which is what dominates a large first reconcile.
    inserted = sum(result.inserted for result in enqueue_many(wanted)) if wanted else 0
    stats.enqueued += inserted
    # Blocked by an existing job, or a job for it appeared since the check.
    stats.skipped += len(missing) - inserted
