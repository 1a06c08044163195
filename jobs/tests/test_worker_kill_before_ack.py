"""kill -9 between finishing jobs and acking them: the jobs run again, none is lost or done twice.

Between a handler's return and its ack reaching the database there is a
window where the job has run but its row is still `running`. A worker killed
in that window must cost nothing but a re-run: reclaim returns the rows to
pending, the next worker runs them again under a new lease generation, and
each job ends done exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from analysis.payloads import AnalyzePage
from jobs import queue
from jobs.models import Job, JobState
from testsupport.worker_processes import wait_until

pytestmark = [
    pytest.mark.process,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a killed process's leases need PostgreSQL"),
]

CHILD = os.path.join(os.path.dirname(__file__), "ack_flush_child.py")
JOBS = 30


@pytest.fixture
def start_child(child_env):
    children: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        child = subprocess.Popen([sys.executable, CHILD, *args], env={**child_env, "LOG_LEVEL": "WARNING"})
        children.append(child)
        return child

    yield start
    for child in children:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)


def test_kill9_between_finishing_a_batch_and_acking_it_reruns_those_jobs_exactly_once(start_child, tmp_path):
    job_ids = {r.id for r in queue.enqueue_many(AnalyzePage(page_id=uuid.uuid4()) for _ in range(JOBS))}
    runs, marker = tmp_path / "runs.txt", tmp_path / "batch.txt"

    first = start_child("--runs", str(runs), "--stall-before-ack", str(marker))
    wait_until(marker.exists, what="the first batch of acks to be about to flush")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)

    batch = {uuid.UUID(line) for line in marker.read_text().split()}
    assert batch
    ran_first = Counter(line.split()[0] for line in runs.read_text().splitlines())
    assert {str(job_id) for job_id in batch} <= set(ran_first)  # their handlers had finished...
    rows = {row.id: row for row in Job.objects.filter(id__in=batch)}
    assert {row.state for row in rows.values()} == {JobState.RUNNING}  # ...but no ack reached the database
    assert not Job.objects.filter(state=JobState.DONE).exists()

    # The dead worker's leases lapse (moved, not slept); the next worker reclaims them at boot.
    Job.objects.filter(state=JobState.RUNNING).update(leased_until=timezone.now() - timedelta(seconds=1))
    second = start_child("--runs", str(runs))
    assert second.wait(timeout=120) == 0

    jobs = {row.id: row for row in Job.objects.filter(id__in=job_ids)}
    assert {row.state for row in jobs.values()} == {JobState.DONE}  # none lost
    assert {row.attempts for row in jobs.values()} == {1}  # the killed attempt was refunded
    runs_by_job = Counter(tuple(line.split()) for line in runs.read_text().splitlines())
    assert [key for key, n in runs_by_job.items() if n > 1] == []  # one run per (job, lease generation)
    for job_id in batch:
        # Ran under the killed lease and once more under the lease that acked it.
        generations = sorted(int(g) for j, g in runs_by_job if j == str(job_id))
        assert generations == [1, jobs[job_id].lease_generation] and generations[1] > 1
    done_runs = {(str(row.id), str(row.lease_generation)) for row in jobs.values()}
    assert done_runs <= set(runs_by_job)  # every done row is the result of a run under its own lease
