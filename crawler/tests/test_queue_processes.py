"""The queue across real OS processes, each with its own PostgreSQL connection."""

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from django.db import connection

from crawler import queue
from crawler.models import Job, JobState
from crawler.queue.payloads import AnalyzePage

CHILD = os.path.join(os.path.dirname(__file__), "queue_race_child.py")

pytestmark = [
    pytest.mark.process,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="SKIP LOCKED across processes needs PostgreSQL"),
]


class Child:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, CHILD, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"child exited early with {self.proc.wait(timeout=10)}"
        return line.strip()

    def expect(self, line: str) -> None:
        assert self.read() == line

    def ask(self, line: str) -> dict:
        self.send(line)
        return json.loads(self.read())


@pytest.fixture
def spawn(child_env) -> Iterator:
    children: list[Child] = []

    def start(*args: str) -> Child:
        """Start a child; call `expect("ready")` before driving it (lets several boot in parallel)."""
        child = Child(list(args), child_env)
        children.append(child)
        return child

    yield start
    for child in children:
        if child.proc.poll() is None:
            child.proc.kill()
        child.proc.wait(timeout=10)


def test_concurrent_processes_lease_and_ack_every_job_exactly_once(spawn, tmp_path):
    results = queue.enqueue_many(AnalyzePage(page_id=uuid.uuid4()) for _ in range(2000))
    job_ids = {r.id for r in results}
    assert len(job_ids) == 2000
    outs = [tmp_path / f"leased-{n}.txt" for n in range(4)]
    # Half the processes ack one by one, half in batches: both must hold the guard.
    children = [
        spawn("drain", "--batch", str(batch), "--ack", ack, "--out", str(out))
        for out, batch, ack in zip(outs, (20, 25, 30, 50), ("single", "many", "single", "many"), strict=True)
    ]
    for child in children:
        child.expect("ready")
    for child in children:
        child.send("go")
    for child in children:
        assert child.proc.wait(timeout=240) == 0

    leased = [line.split() for out in outs for line in out.read_text().splitlines()]
    counts = Counter(job_id for job_id, _ in leased)
    assert [job_id for job_id, n in counts.items() if n > 1] == []  # no job leased twice
    assert {uuid.UUID(job_id) for job_id in counts} == job_ids  # none left behind
    assert {generation for _, generation in leased} == {"1"}
    assert sum(1 for out in outs if out.read_text()) >= 2  # the work was actually shared
    rows = Job.objects.filter(id__in=job_ids)
    assert dict(Counter(rows.values_list("state", flat=True))) == {JobState.DONE: 2000}
    assert set(rows.values_list("lease_generation", flat=True)) == {1}
    assert set(rows.values_list("attempts", flat=True)) == {1}


def test_late_ack_from_an_expired_lease_in_another_process_changes_nothing(spawn):
    job_id = queue.enqueue(AnalyzePage(page_id=uuid.uuid4())).id
    worker_a = spawn("serve")
    worker_b = spawn("serve")
    worker_a.expect("ready")
    worker_b.expect("ready")

    # A's lease is zero-length: it has lapsed by the time anyone looks again.
    held_a = worker_a.ask("lease 0")
    assert held_a == {"id": str(job_id), "generation": 1}
    held_b = worker_b.ask("lease 300")
    assert held_b == {"id": str(job_id), "generation": 2}
    before = Job.objects.filter(id=job_id).values()[0]

    assert worker_a.ask("ack") == {"acked": False}

    assert Job.objects.filter(id=job_id).values()[0] == before
    assert before["state"] == JobState.RUNNING and before["lease_generation"] == 2
    assert worker_b.ask("ack") == {"acked": True}
    row = Job.objects.get(id=job_id)
    assert row.state == JobState.DONE
    assert row.lease_generation == 2
    assert row.attempts == 2
    for worker in (worker_a, worker_b):
        worker.send("quit")
        assert worker.proc.wait(timeout=30) == 0
