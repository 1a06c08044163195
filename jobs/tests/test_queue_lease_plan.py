"""The lease walks the leasable index in order whatever the planner's statistics say.

A table with a long done history, analysed while nothing was pending, then a
burst of enqueues: the statistics say pending rows are rare. Left to itself
the planner then collects every pending row through the (state, kind) index
and sorts them, so each lease costs O(backlog). The claim statements turn
sorts off for their own transaction, which leaves the ordered index walk that
stops after `max` rows.
"""

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection

from analysis.payloads import AnalyzePage
from jobs import queries, queue
from jobs.models import Job, JobState
from testsupport.plans import plan_nodes

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="query plans are PostgreSQL's"),
]

LEASE = timedelta(minutes=5)
HISTORY = 3000
BACKLOG = 3000


def _walks_the_leasable_index(nodes: list[dict[str, Any]]) -> bool:
    return any(n["Node Type"] == "Index Scan" and n.get("Index Name") == "crawler_jobs_leasable_idx" for n in nodes)


@pytest.fixture
def stale_statistics() -> list[uuid.UUID]:
    """Done history analysed with nothing pending, then a backlog the statistics never saw; the backlog's ids.

    Index pages are also priced as a bloated, uncached index's would be
    (`random_page_cost`, for this test's transaction only): whatever else
    the planner believes, the claim must still walk the index.
    """
    queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(HISTORY)])
    Job.objects.update(state=JobState.DONE)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE crawler_jobs")
        cursor.execute("SET LOCAL random_page_cost = 1000")
    results = queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(BACKLOG)])
    return [r.id for r in results if r.id is not None]


def test_stale_statistics_would_sort_the_whole_backlog_without_the_ordered_walk(stale_statistics):
    # The trap the claim statements avoid: under these statistics the bare
    # lease plans a sort of every pending row.
    nodes = plan_nodes(queries.statement("lease_jobs").sql, queue.claim_params(["analyze_page"], 10, LEASE))

    assert any(n["Node Type"] == "Sort" for n in nodes)
    assert not _walks_the_leasable_index(nodes)


def test_lease_walks_the_leasable_index_without_a_sort_under_stale_statistics(stale_statistics):
    statement = queries.statement("lease_jobs")
    nodes = plan_nodes(
        statement.sql, queue.claim_params(["analyze_page"], 10, LEASE), queries.explain_with_settings(statement)
    )

    assert _walks_the_leasable_index(nodes)
    assert not any(n["Node Type"] == "Sort" for n in nodes)


def _planner_settings() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('jit')")
        return cursor.fetchone()


def test_claims_under_stale_statistics_come_oldest_first_and_leave_the_settings_as_they_were(stale_statistics):
    before = _planner_settings()

    first = queue.lease(["analyze_page"], 4, LEASE)
    assert queue.ack_done_many(first) == 4
    second = queue.lease(["analyze_page"], 6, LEASE)

    assert [lease.id for lease in first + second] == stale_statistics[:10]
    assert _planner_settings() == before  # inside the test's transaction: put back after each claim


def test_array_literals_round_trip_every_character():
    # The claim statements take their id and kind lists as literals (`queries.array`).
    texts = ["a", 'we"ird', "back\\slash", "com,ma", "{brace}", " spaced ", "", "NULL", "quo'te", "ünï"]
    ids = [uuid.uuid4() for _ in range(3)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::text[], %s::uuid[], %s::bigint[], %s::text[]",
            [queries.array(texts), queries.array(ids), queries.array([1, 2**40]), queries.array([])],
        )
        assert cursor.fetchone() == (texts, ids, [1, 2**40], [])
