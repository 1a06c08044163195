"""The dashboard's capped counts walk an index and stop at the bound, whatever the planner prices.

A busy queue's rows change all the time, so the visibility map is mostly
stale and an index-only walk is priced as a heap fetch a row; the planner
then counts a big group "until N + 1 match" by sequential scan, which reads
every row stored before them (362 ms at 10k mangas in bench/big_site.py
against 2.8 ms). Here index pages are priced as a bloated, uncached index's
would be, for the test's transaction only, to put the planner in that state.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from analysis.payloads import AnalyzePage
from jobs import counts, kinds, queries, queue
from testsupport.plans import plan_nodes

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="query plans are PostgreSQL's"),
]

PENDING = 2_000


def _scans(*, index_walk: bool) -> set[str]:
    statement = queries.statement("count_jobs")
    params = {"kinds": queries.array(kinds.names()), "limit": counts.COUNT_EXACT_UP_TO + 1}
    nodes = plan_nodes(statement.sql, params, queries.explain_with_settings(statement) if index_walk else None)
    return {
        f"{node['Node Type']} {node.get('Index Name', '')}".strip()
        for node in nodes
        if node.get("Relation Name") == "crawler_jobs"
    }


@pytest.fixture
def index_priced_as_uncached():
    queue.enqueue_many([AnalyzePage(page_id=uuid.uuid4()) for _ in range(PENDING)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE crawler_jobs")
        cursor.execute("SET LOCAL random_page_cost = 1000")


def test_left_to_itself_the_planner_would_count_a_big_group_by_sequential_scan(index_priced_as_uncached):
    # The trap the counts avoid.
    assert "Seq Scan" in _scans(index_walk=False)


def test_the_capped_counts_only_walk_indexes(index_priced_as_uncached):
    scans = _scans(index_walk=True)
    assert scans and all(scan.startswith(("Index Only Scan ", "Index Scan ")) for scan in scans), scans


def test_the_counts_leave_the_planner_settings_as_they_found_them(index_priced_as_uncached):
    assert counts.queue_counts()["analyze_page"]["pending"] == PENDING
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone()[0] == "on"
        cursor.execute("SHOW random_page_cost")
        assert cursor.fetchone()[0] == "1000"
