"""Work on job rows no worker holds: the boot-time reclaim, the done reaper, and withdrawing or upgrading pending jobs.

Each is one statement guarded on `state` (the named ones in `jobs/queries.sql`), so a row a worker leases or
finishes meanwhile is left as it is.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.db import connection
from django.db.models import QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from jobs import queries
from jobs.models import Job, JobState
from jobs.payloads import Payload


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
    return queries.execute("reclaim_expired", queries.clock())


def reap_done(retention_days: int) -> int:
    """Delete done jobs older than `retention_days`; 0 disables the reaper."""
    if retention_days <= 0:
        return 0
    return queries.execute("reap_done", {"cutoff": timezone.now() - timedelta(days=retention_days)})


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
