"""The queue across real OS processes, each with its own PostgreSQL connection.

Every test runs twice: straight at PostgreSQL and through PgBouncer in
transaction mode, where each transaction may land on another server session.
"""

import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from django.db import connection

from analysis.payloads import AnalyzePage
from jobs import queue
from jobs.models import Job, JobState
from testsupport.worker_processes import race_children

pytestmark = [
    pytest.mark.process,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="SKIP LOCKED across processes needs PostgreSQL"),
    pytest.mark.parametrize("db_route", ["direct", "pgbouncer"], indirect=True),
]


@pytest.fixture
def spawn(routed_child_env) -> Iterator:
    yield from race_children(routed_child_env)


def pooled_transactions(request, db_route: str) -> int:
    """Transactions PgBouncer has carried for the test database (0 when the children go direct)."""
    if db_route == "direct":
        return 0
    return request.getfixturevalue("pgbouncer").transactions(connection.settings_dict["NAME"])


def test_concurrent_processes_lease_and_ack_every_job_exactly_once(spawn, tmp_path, request, db_route):
    pooled_before = pooled_transactions(request, db_route)
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
    if db_route != "direct":
        # Every lease and ack went through the pooler: at least one transaction per batch.
        assert pooled_transactions(request, db_route) - pooled_before >= 2000 // 50


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
