"""Dead-letter requeue through the API: every scope, the DISTINCT-ON dedup, and refusals that change nothing."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from crawler.models import AuditEvent
from crawler.payloads import SyncChapterContent
from jobs.models import Job, JobState
from testsupport import api_factories as f

URL = "/api/v1/admin/crawler/requeue/"


@pytest.fixture
def client(staff) -> APIClient:
    return f.api_client(staff)


def post(client: APIClient, body: object):
    return f.post_json(client, URL, body)


@pytest.fixture
def library(db):
    src = f.source("demo")
    one, two = f.manga("One", src=src), f.manga("Two", src=src)
    return {
        "src": src,
        "one": one,
        "two": two,
        "one_ch1": f.chapter(one, 1, src=src),
        "one_ch2": f.chapter(one, 2, src=src),
        "two_ch1": f.chapter(two, 1, src=src),
    }


def states() -> dict[uuid.UUID, str]:
    return dict(Job.objects.values_list("id", "state"))


def dead_three_times(chapter) -> list[Job]:
    """The same chapter died, was enqueued again and died again, three times over."""
    return [f.dead_content_job(chapter) for _ in range(3)]


@pytest.mark.sqlite_ok
def test_job_scope_revives_that_job_only_and_audits_its_id(client, staff, library):
    target, other = f.dead_content_job(library["one_ch1"]), f.dead_content_job(library["one_ch2"])
    response = post(client, {"scope": "job", "target": str(target.id)})
    assert response.status_code == 200
    assert response.json() == {"scope": "job", "target": str(target.id), "requeued": 1}
    target.refresh_from_db()
    assert (target.state, target.attempts) == (JobState.PENDING, 0)
    assert Job.objects.get(id=other.id).state == JobState.DEAD
    audit = AuditEvent.objects.get(action="requeue_dead")
    assert (audit.actor, audit.scope, audit.target_id, audit.detail) == (staff, "job", str(target.id), {"requeued": 1})


@pytest.mark.sqlite_ok
def test_chapter_scope_with_several_dead_rows_yields_one_pending_job(client, library):
    ch = library["one_ch1"]
    dead_three_times(ch)
    untouched = f.dead_content_job(library["one_ch2"])
    response = post(client, {"scope": "chapter", "target": str(ch.id)})
    assert response.status_code == 200
    assert response.json()["requeued"] == 1
    rows = Job.objects.filter(chapter_id=ch.id)
    assert rows.filter(state=JobState.PENDING).count() == 1
    assert not rows.filter(state=JobState.DEAD).exists()  # the superseded twins leave the dead list
    assert Job.objects.get(id=untouched.id).state == JobState.DEAD


@pytest.mark.sqlite_ok
def test_chapter_scope_with_a_job_already_in_flight_adds_none_and_does_not_fail(client, library):
    ch = library["one_ch1"]
    dead_three_times(ch)
    in_flight = f.job(SyncChapterContent(source_id="demo", chapter_id=ch.id, source_chapter_key="k"), "running")
    response = post(client, {"scope": "chapter", "target": str(ch.id)})
    assert response.status_code == 200
    assert response.json()["requeued"] == 0
    assert list(Job.objects.filter(chapter_id=ch.id, state__in=["pending", "running"])) == [in_flight]


@pytest.mark.sqlite_ok
def test_manga_scope_covers_its_chapter_and_page_jobs_only(client, library):
    dead_three_times(library["one_ch1"])
    f.dead_content_job(library["one_ch2"])
    analyze = f.dead_analyze_job(f.page(library["one_ch2"]))
    other_manga = f.dead_content_job(library["two_ch1"])
    response = post(client, {"scope": "manga", "target": str(library["one"].id)})
    assert response.json()["requeued"] == 3
    assert Job.objects.get(id=analyze.id).state == JobState.PENDING
    assert Job.objects.get(id=other_manga.id).state == JobState.DEAD
    assert Job.objects.filter(state=JobState.PENDING).count() == 3


@pytest.mark.sqlite_ok
def test_all_scope_with_confirm_revives_one_per_key(client, library):
    dead_three_times(library["one_ch1"])
    f.dead_content_job(library["two_ch1"])
    f.dead_sync_manga("Gone Manga")
    response = post(client, {"scope": "all", "confirm": True})
    assert response.status_code == 200
    assert response.json() == {"scope": "all", "target": None, "requeued": 3}
    assert not Job.objects.filter(state=JobState.DEAD).exists()


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "body", [{"scope": "all"}, {"scope": "all", "confirm": False}, {"scope": "all", "confirm": "no"}]
)
def test_all_without_confirm_is_400_and_nothing_changes(client, library, body):
    dead_three_times(library["one_ch1"])
    before = states()
    response = post(client, body)
    assert response.status_code == 400
    assert "confirm" in response.json()
    assert states() == before
    assert not AuditEvent.objects.exists()


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"scope": "everything", "confirm": True},
        {"scope": "chapter"},
        {"scope": "chapter", "target": None},
        {"scope": "chapter", "target": "not-a-uuid"},
        {"scope": "manga", "target": "missing"},  # replaced by an unknown uuid below
        {"scope": "job", "target": "missing"},
        {"scope": "job", "target": "pending-job"},
        {"scope": "all", "confirm": True, "target": "chapter"},
        {"scope": "chapter", "target": "manga"},  # a manga id given as a chapter id
        ["scope", "all"],
    ],
    ids=lambda b: repr(b)[:50],
)
def test_bad_requeue_input_is_400_and_nothing_changes(client, library, body):
    dead_three_times(library["one_ch1"])
    pending = f.job(SyncChapterContent(source_id="demo", chapter_id=library["two_ch1"].id, source_chapter_key="x"))
    swap = {
        "missing": str(uuid.uuid4()),
        "pending-job": str(pending.id),
        "chapter": str(library["one_ch1"].id),
        "manga": str(library["one"].id),
    }
    if isinstance(body, dict) and body.get("target") in swap:
        body = {**body, "target": swap[body["target"]]}
    before = states()
    response = post(client, body)
    assert response.status_code == 400, response.content
    assert response.json()
    assert states() == before
    assert not AuditEvent.objects.exists()
