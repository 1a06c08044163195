"""The ORM form of each queue operation, the one SQLite runs, holds the same guarantees on PostgreSQL.

`jobs.sql` keeps a hand-written PostgreSQL statement for three hot paths;
here those are switched off, so the ORM implementation is what runs.
"""

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction

from analysis.payloads import AnalyzePage
from jobs import queue, retry, sql
from jobs.models import Job, JobState

LEASE = timedelta(minutes=5)


@pytest.fixture
def orm_only(monkeypatch):
    monkeypatch.setattr(sql, "applies", lambda: False)


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_enqueue_keeps_order_and_dedups_and_lease_claims_in_that_order(orm_only):
    pages = [uuid.uuid4() for _ in range(5)]
    results = queue.enqueue_many([AnalyzePage(page_id=p) for p in pages] + [AnalyzePage(page_id=pages[0])])
    assert [r.inserted for r in results] == [True] * 5 + [False]
    assert queue.enqueue(AnalyzePage(page_id=pages[1])).skipped

    leases = queue.lease(["analyze_page"], 3, LEASE)
    assert [lease.payload.page_id for lease in leases] == pages[:3]
    assert {lease.lease_generation for lease in leases} == {1}
    assert queue.lease(["analyze_page"], 10, LEASE)[0].payload.page_id == pages[3]


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_ack_done_many_steps_aside_for_a_stale_lease(orm_only):
    queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(2)])
    first, second = queue.lease(["analyze_page"], 2, LEASE)
    assert retry.release_unowned(second.id)
    successor = queue.lease(["analyze_page"], 1, LEASE)[0]

    assert queue.ack_done_many([first, second]) == 1
    assert Job.objects.get(id=first.id).state == JobState.DONE
    row = Job.objects.get(id=second.id)
    assert (row.state, row.lease_generation) == (JobState.RUNNING, successor.lease_generation)


@pytest.mark.django_db(transaction=True)
def test_a_leaser_skips_rows_another_leaser_holds_locked(orm_only):
    if connection.vendor != "postgresql":
        pytest.skip("SKIP LOCKED is PostgreSQL's; SQLite serialises leasers instead")
    ids = {r.id for r in queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(4)])}
    holding, other = threading.Event(), threading.Event()
    got: dict[str, set] = {}

    def first() -> None:
        with transaction.atomic():
            got["first"] = {lease.id for lease in queue.lease(["analyze_page"], 2, LEASE)}
            holding.set()
            other.wait(10)  # keeps its row locks until the other leaser is done
        connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    assert holding.wait(10)
    got["second"] = {lease.id for lease in queue.lease(["analyze_page"], 4, LEASE)}
    assert thread.is_alive()  # the second leaser did not wait for the first one's locks
    other.set()
    thread.join(10)

    assert len(got["first"]) == 2 and len(got["second"]) == 2
    assert got["first"] | got["second"] == ids  # every job once, none twice


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_acks_and_the_next_claim_commit_together_and_never_claim_what_they_ack(orm_only):
    ids = [r.id for r in queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(3)])]
    first = queue.lease(["analyze_page"], 2, LEASE)

    acked, leases = queue.ack_done_many_and_lease(first, ["analyze_page"], 5, LEASE)

    assert acked == 2
    assert [lease.id for lease in leases] == ids[2:]
    assert set(Job.objects.filter(id__in=ids[:2]).values_list("state", flat=True)) == {JobState.DONE}
