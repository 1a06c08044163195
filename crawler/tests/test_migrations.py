"""Migration 0002 demotes duplicate in-flight jobs before adding the dedup constraint."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from analysis.payloads import AnalyzePage
from jobs import queue, requeue

BEFORE = [("crawler", "0001_initial")]
AFTER = [("crawler", "0002_inflight_dedup")]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_inflight_dedup_migration_demotes_all_but_the_oldest_duplicate(migrator):
    apps = migrator(BEFORE)
    Job = apps.get_model("crawler", "Job")
    page_id = uuid.uuid4()
    dirty_key = f"analyze_page:{page_id}"
    start = timezone.now() - timedelta(hours=3)

    def row(key, state, minutes, **extra):
        at = start + timedelta(minutes=minutes)
        return Job.objects.create(
            kind="analyze_page",
            payload={"kind": "analyze_page", "page_id": str(page_id)},
            state=state,
            dedup_key=key,
            scheduled_at=at,
            created_at=at,
            updated_at=at,
            **extra,
        ).id

    oldest = row(dirty_key, "pending", 0)
    running_dup = row(dirty_key, "running", 10, leased_until=start + timedelta(hours=5), attempts=1)
    pending_dup = row(dirty_key, "pending", 20)
    finished = row(dirty_key, "done", -30)
    clean = row("analyze_page:clean", "pending", 5)

    apps = migrator(AFTER)

    Job = apps.get_model("crawler", "Job")
    rows = {job.id: job for job in Job.objects.all()}
    assert rows[oldest].state == "pending"
    assert rows[clean].state == "pending"
    assert rows[finished].state == "done"
    for demoted in (running_dup, pending_dup):
        assert rows[demoted].state == "dead"
        assert rows[demoted].leased_until is None
        assert "demoted by migration 0002_inflight_dedup" in rows[demoted].last_error
        assert dirty_key in rows[demoted].last_error
        assert "requeue" in rows[demoted].last_error  # the marker says how to recover
    # The live queue writes today's schema: bring every app up to date first.
    migrator(MigrationExecutor(connection).loader.graph.leaf_nodes())
    # The constraint is live now: the key is taken by the surviving row.
    assert queue.enqueue(AnalyzePage(page_id=page_id)).skipped
    # And a demoted row is recoverable once the survivor has finished.
    Job.objects.filter(id=oldest).update(state="done")
    assert requeue.requeue_dead("job", pending_dup) == 1
