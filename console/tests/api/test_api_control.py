"""Run/reconcile requests (409 on overlap), browser restart and force-analyze through the admin API."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection
from rest_framework.test import APIClient

from analysis.payloads import AnalyzePage
from analysis.service import EnqueueForPageOutcome
from crawler import state_store
from crawler.models import AuditEvent
from jobs.models import Job, JobState
from testsupport import api_factories as f

BASE = "/api/v1/admin/crawler/"


@pytest.fixture
def client(staff) -> APIClient:
    return f.api_client(staff)


def post(client: APIClient, route: str, body: object = None):
    return f.post_json(client, BASE + route, body)


def in_flight(kind: str) -> list[str]:
    return sorted(
        Job.objects.filter(kind=kind, state__in=["pending", "running"]).values_list("payload__source_id", flat=True)
    )


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(("route", "kind"), [("run/", "metadata_pass"), ("reconcile/", "reconcile")])
def test_pass_request_enqueues_for_every_enabled_source_then_409_while_in_flight(client, staff, db, route, kind):
    f.source("demo")
    f.source("target")
    f.source("old", enabled=False)
    first = post(client, route)
    assert first.status_code == 202
    assert {r["source"]: r["skipped"] for r in first.json()["results"]} == {"demo": False, "target": False}
    assert in_flight(kind) == ["demo", "target"]
    audit = AuditEvent.objects.get()
    assert (audit.actor, audit.scope) == (staff, "all")
    assert set(audit.detail["enqueued"]) == {"demo", "target"}

    again = post(client, route)
    assert again.status_code == 409
    assert "already in flight" in again.json()["detail"]
    assert all(r["skipped"] for r in again.json()["results"])
    assert in_flight(kind) == ["demo", "target"]
    assert AuditEvent.objects.count() == 1


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(("route", "kind"), [("run/", "metadata_pass"), ("reconcile/", "reconcile")])
def test_named_source_409s_only_for_itself_and_runs_again_once_finished(client, db, route, kind):
    f.source("demo")
    f.source("target")
    assert post(client, route, {"source": "demo"}).status_code == 202
    assert post(client, route, {"source": "demo"}).status_code == 409
    assert post(client, route, {"source": "target"}).status_code == 202
    # A running pass still blocks; a finished one frees the slot.
    Job.objects.filter(kind=kind, payload__source_id="demo").update(state=JobState.RUNNING)
    assert post(client, route, {"source": "demo"}).status_code == 409
    Job.objects.filter(kind=kind, payload__source_id="demo").update(state=JobState.DONE)
    assert post(client, route, {"source": "demo"}).status_code == 202


@pytest.mark.sqlite_ok
def test_run_and_reconcile_do_not_block_each_other(client, db):
    f.source("demo")
    assert post(client, "run/").status_code == 202
    assert post(client, "reconcile/").status_code == 202


@pytest.mark.sqlite_ok
def test_partial_overlap_is_accepted_and_says_which_source_was_in_flight(client, db):
    f.source("demo")
    f.source("target")
    post(client, "run/", {"source": "demo"})
    response = post(client, "run/")
    assert response.status_code == 202
    assert {r["source"]: r["skipped"] for r in response.json()["results"]} == {"demo": True, "target": False}


@pytest.mark.django_db(transaction=True)
def test_concurrent_run_clicks_enqueue_exactly_one_pass(staff):
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL")
    f.source("demo")
    barrier, codes = threading.Barrier(8), []

    def click() -> None:
        client = f.api_client(staff)
        barrier.wait()
        try:
            codes.append(post(client, "run/").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [202] + [409] * 7
    assert Job.objects.filter(kind="metadata_pass").count() == 1


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("setup", "body", "status"),
    [
        ("none", {}, 409),  # nothing enabled: nothing to run
        ("demo", {"source": "nope"}, 400),
        ("disabled", {"source": "old"}, 400),
        ("demo", {"source": ""}, 400),
        ("demo", {"source": 12}, 400),
        ("demo", ["demo"], 400),
    ],
    ids=["no-enabled-source", "unknown", "disabled", "blank", "number", "not-an-object"],
)
@pytest.mark.parametrize("route", ["run/", "reconcile/"])
def test_bad_pass_request_is_4xx_and_enqueues_nothing(client, db, route, setup, body, status):
    if setup == "demo":
        f.source("demo")
    if setup == "disabled":
        f.source("demo")
        f.source("old", enabled=False)
    response = post(client, route, body)
    assert response.status_code == status, response.content
    assert response.json()
    assert not Job.objects.exists()
    assert not AuditEvent.objects.exists()


@pytest.mark.sqlite_ok
def test_restart_browser_bumps_the_generation_workers_watch(client, staff, db):
    assert state_store.browser_restart_generation() == 0
    assert post(client, "restart-browser/").json() == {"generation": 1}
    assert post(client, "restart-browser/").json() == {"generation": 2}
    assert state_store.browser_restart_generation() == 2
    assert list(AuditEvent.objects.values_list("action", "actor")) == [("restart_browser", staff.id)] * 2


@pytest.fixture
def page(db):
    src = f.source("demo")
    return f.page(f.chapter(f.manga(src=src), 1, src=src))


@pytest.mark.sqlite_ok
def test_force_analyze_inserts_then_upgrades_and_audits_each_outcome(client, page):
    first = post(client, "force-analyze/", {"page": str(page.id)})
    assert first.status_code == 202
    assert first.json() == {"page": str(page.id), "outcome": EnqueueForPageOutcome.INSERTED.value}
    job = Job.objects.get(kind="analyze_page", page_id=page.id)
    assert job.payload["force"] is True
    second = post(client, "force-analyze/", {"page": str(page.id)})
    assert second.json()["outcome"] == EnqueueForPageOutcome.ALREADY_FORCED.value
    audits = AuditEvent.objects.filter(action="force_analyze").order_by("created_at")
    assert [(a.scope, a.target_id, a.detail["outcome"]) for a in audits] == [
        ("page", str(page.id), "inserted"),
        ("page", str(page.id), "already_forced"),
    ]


@pytest.mark.sqlite_ok
def test_force_analyze_releases_a_running_job(client, page):
    running = f.job(AnalyzePage(page_id=page.id), "running", lease_generation=3)
    response = post(client, "force-analyze/", {"page": str(page.id)})
    assert response.json()["outcome"] == EnqueueForPageOutcome.RELEASED_RUNNING.value
    running.refresh_from_db()
    assert running.state == JobState.PENDING
    assert running.lease_generation > 3


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "body", [{}, {"page": "nope"}, {"page": None}, {"page": "unknown"}, {"page": 7}], ids=lambda b: repr(b)
)
def test_force_analyze_bad_page_is_400_and_changes_nothing(client, page, body):
    if body.get("page") == "unknown":
        body = {"page": str(uuid.uuid4())}
    response = post(client, "force-analyze/", body)
    assert response.status_code == 400
    assert "page" in response.json()
    assert not Job.objects.exists()
    assert not AuditEvent.objects.exists()


@pytest.mark.sqlite_ok
def test_force_analyze_with_analysis_disabled_is_409(client, page, settings):
    settings.ANALYSIS_ENABLED = False
    response = post(client, "force-analyze/", {"page": str(page.id)})
    assert response.status_code == 409
    assert not Job.objects.exists()
