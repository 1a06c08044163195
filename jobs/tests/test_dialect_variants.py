"""Each named statement's dialect variants keep the same guarantees: these run on PostgreSQL and on SQLite.

`jobs/queries.sql` writes a statement once, with a SQLite variant beside the
PostgreSQL one where the text must differ; the tests marked `sqlite_ok` run
against both, so the variants are held to the same answers.
"""

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction

from analysis.payloads import AnalyzePage
from jobs import queries, queue, retry
from jobs.models import Job, JobState

LEASE = timedelta(minutes=5)


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_enqueue_keeps_order_and_dedups_and_lease_claims_in_that_order():
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
def test_ack_done_many_steps_aside_for_a_stale_lease():
    queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(2)])
    first, second = queue.lease(["analyze_page"], 2, LEASE)
    assert retry.release_unowned(second.id)
    successor = queue.lease(["analyze_page"], 1, LEASE)[0]

    assert queue.ack_done_many([first, second]) == 1
    assert Job.objects.get(id=first.id).state == JobState.DONE
    row = Job.objects.get(id=second.id)
    assert (row.state, row.lease_generation) == (JobState.RUNNING, successor.lease_generation)


@pytest.mark.django_db(transaction=True)
def test_a_leaser_skips_rows_another_leaser_holds_locked():
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
def test_acks_and_the_next_claim_commit_together_and_never_claim_what_they_ack():
    ids = [r.id for r in queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(3)])]
    first = queue.lease(["analyze_page"], 2, LEASE)

    acked, leases = queue.ack_done_many_and_lease(first, ["analyze_page"], 5, LEASE)

    assert acked == 2
    assert [lease.id for lease in leases] == ids[2:]
    assert set(Job.objects.filter(id__in=ids[:2]).values_list("state", flat=True)) == {JobState.DONE}


def test_every_statement_has_a_variant_for_each_database_but_the_postgresql_only_ones():
    postgresql_only = {"announce", "notify_status", "estimate_jobs"}  # NOTIFY and the planner's estimates: not SQLite's
    names = {name for name, _ in queries.statements()}
    for name in names:
        assert queries.statement(name, "postgresql").name == name
        if name not in postgresql_only:
            assert queries.statement(name, "sqlite")
    assert postgresql_only <= names


def test_a_block_is_parsed_into_its_statements_planner_settings_and_shared_variants():
    parsed = queries.parse(
        "-- name: a\n-- dialect: postgresql\n-- planner off: enable_sort, jit\n-- why\nSELECT 1\n\n"
        "-- name: a\n-- dialect: sqlite\nUPDATE t SET x = 1;\nSELECT 2\n\n"
        "-- name: b\n-- dialect: sqlite\n-- same as: a\n"
    )
    assert parsed[("a", "postgresql")].parts == ("SELECT 1",)
    assert parsed[("a", "postgresql")].wrapped == (
        "SET LOCAL enable_sort = off;\nSET LOCAL jit = off;\nSELECT 1;\n"
        "SET LOCAL enable_sort TO DEFAULT;\nSET LOCAL jit TO DEFAULT"
    )
    assert parsed[("a", "sqlite")].parts == ("UPDATE t SET x = 1", "SELECT 2")
    assert parsed[("b", "sqlite")] is parsed[("a", "sqlite")]


@pytest.mark.parametrize(
    "text",
    [
        "-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n",  # written twice
        "-- name: a\n-- dialect: oracle\nSELECT 1\n",  # a dialect nobody runs
        "-- name: a\n-- only a comment\n",  # empty
    ],
)
def test_a_statement_written_twice_for_one_dialect_or_empty_is_refused(text):
    with pytest.raises(ValueError):
        queries.parse(text)
