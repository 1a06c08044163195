"""Leases that leave sources out or name kinds walk only the eligible (source, kind) groups."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from analysis.payloads import AnalyzePage
from crawler.payloads import SyncChapterContent
from jobs import queries, queue
from jobs.models import Job

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the per-group walk is PostgreSQL's")

LEASE = timedelta(minutes=5)


def content(source: str) -> SyncChapterContent:
    return SyncChapterContent(source_id=source, chapter_id=uuid.uuid4(), source_chapter_key="k")


@pytest.fixture
def interleaved(db):
    """Jobs of two sources and analyze jobs, enqueued alternately: the ids in enqueue (= lease) order."""
    ids = []
    for _ in range(4):
        for payload in (content("big"), content("small"), AnalyzePage(page_id=uuid.uuid4())):
            ids.append((payload, queue.enqueue(payload).id))
    return ids


def test_enqueue_stores_the_payloads_source_as_a_column(interleaved):
    sources = dict(Job.objects.values_list("id", "source_id"))
    assert {sources[job_id] for payload, job_id in interleaved if payload.kind == "analyze_page"} == {""}
    assert {sources[job_id] for payload, job_id in interleaved if payload.kind != "analyze_page"} == {"big", "small"}


def test_a_lease_naming_kinds_takes_the_oldest_rows_across_groups_in_lease_order(interleaved):
    leased = queue.lease(["sync_chapter_content"], 5, LEASE)
    expected = [job_id for payload, job_id in interleaved if payload.kind == "sync_chapter_content"][:5]
    assert [lease.id for lease in leased] == expected


def test_a_lease_leaving_a_source_out_never_takes_its_jobs_however_old(interleaved):
    leased = queue.lease(None, 20, LEASE, exclude_sources={"big"})
    by_id = {job_id: payload for payload, job_id in interleaved}
    assert len(leased) == 8
    assert [lease.id for lease in leased] == [j for p, j in interleaved if getattr(p, "source_id", "") != "big"]
    assert all(getattr(by_id[lease.id], "source_id", "") != "big" for lease in leased)


def test_ack_and_lease_by_group_acks_and_claims_in_one_statement(interleaved):
    first = queue.lease(["analyze_page"], 2, LEASE)
    acked, second = queue.ack_done_many_and_lease(first, ["analyze_page"], 2, LEASE, exclude_sources={"big"})
    analyze = [j for p, j in interleaved if p.kind == "analyze_page"]
    assert acked == 2
    assert [lease.id for lease in first + second] == analyze
    assert set(Job.objects.filter(id__in=analyze[:2]).values_list("state", flat=True)) == {"done"}


@pytest.fixture
def backlog_first(db):
    """Three chapters of a source queued before one of another: the ids by source, in queue order."""
    early = [queue.enqueue(content("early")).id for _ in range(3)]
    late = [queue.enqueue(content("late")).id]
    return early, late


def claim(done, max_jobs):
    """The worker loop's claim: the finished jobs' acks and the next leases in one statement."""
    return queue.ack_done_many_and_lease(done, ["sync_chapter_content"], max_jobs, LEASE)[1]


def test_the_workers_claim_gives_each_source_its_next_job_before_any_source_a_second(backlog_first):
    early, late = backlog_first
    assert [lease.id for lease in claim([], 3)] == [early[0], late[0], early[1]]


def test_in_the_workers_claim_a_source_with_a_job_running_waits_behind_one_with_none(backlog_first):
    early, late = backlog_first
    assert [lease.id for lease in claim([], 1)] == [early[0]]
    assert [lease.id for lease in claim([], 1)] == [late[0]]


def test_a_job_acked_in_the_same_statement_leaves_its_source_free_for_its_next_job(backlog_first):
    early, late = backlog_first
    first = claim([], 1)
    assert [lease.id for lease in claim(first, 1)] == [early[1]]  # older than late's; early has nothing running now


def test_a_plain_lease_keeps_queue_order_across_sources(backlog_first):
    early, late = backlog_first
    assert [lease.id for lease in queue.lease(["sync_chapter_content"], 3, LEASE)] == early


def test_the_walk_reads_no_row_of_an_excluded_group(db):
    """A thousand pending jobs of the excluded source: the plan reads one index entry of their group, not all."""
    queue.enqueue_many([content("big") for _ in range(1000)])
    queue.enqueue(content("small"))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE crawler_jobs")
    for statement, params in (
        ("lease_jobs_by_group", queue.claim_params(None, 10, LEASE, {"big"})),
        ("lease_jobs_round_the_sources", queue.claim_params(None, 10, LEASE, {"big"})),
    ):
        read = _rows_read(statement, params)
        assert sum(rows for _, _, rows in read) < 50, read


def test_counting_a_sources_running_jobs_reads_no_row_of_its_backlog(db):
    """A thousand pending jobs of a source with one running: the lease reads its running row, not its backlog."""
    queue.enqueue_many([content("big") for _ in range(1000)])
    queue.lease(["sync_chapter_content"], 1, LEASE)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE crawler_jobs")
    params = queue.claim_params(["sync_chapter_content"], 1, LEASE)
    read = _rows_read("lease_jobs_round_the_sources", params)
    assert sum(rows for _, _, rows in read) < 50, read


def _rows_read(name: str, params: dict) -> list[tuple[str, str | None, int]]:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # plan as for a big table: the claim joins by primary key
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {queries.statement(name).sql}", params)
        plan = cursor.fetchone()[0]
    read: list[tuple[str, str | None, int]] = []

    def walk(node):
        if node.get("Relation Name") == "crawler_jobs":
            # Rows a filter threw away were read too.
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            read.append((node["Node Type"], node.get("Index Name"), rows * node["Actual Loops"]))
        for child in node.get("Plans", ()):
            walk(child)

    walk((plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"])
    return read


@pytest.mark.django_db(transaction=True)
def test_migration_0005_backfills_the_source_of_every_row_that_can_still_be_leased():
    executor = MigrationExecutor(connection)
    executor.migrate([("jobs", "0004_keyset_paging_indexes")])
    executor.loader.build_graph()
    old = executor.loader.project_state([("jobs", "0004_keyset_paging_indexes")]).apps.get_model("jobs", "Job")
    now = timezone.now()

    def row(state, source):
        payload = {"kind": "sync_chapter_content", "source_id": source, "chapter_id": str(uuid.uuid4())}
        return old.objects.create(
            kind="sync_chapter_content", payload=payload, state=state, scheduled_at=now, created_at=now, updated_at=now
        ).id

    pending, dead, done = row("pending", "big"), row("dead", "small"), row("done", "big")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    sources = dict(Job.objects.values_list("id", "source_id"))
    assert (sources[pending], sources[dead], sources[done]) == ("big", "small", "")
