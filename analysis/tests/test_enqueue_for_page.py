"""`enqueue_for_page`: one test per outcome of `EnqueueForPageOutcome` (inserted, skipped, upgraded, released, …)."""

from __future__ import annotations

import pytest

from analysis import service
from analysis.models import PageAnalysis
from analysis.payloads import AnalyzePage
from analysis.service import EnqueueForPageOutcome, enqueue_for_page
from analysis.tests.helpers import lease_one
from jobs import queue, retry
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def _only_job(page) -> Job:
    (job,) = Job.objects.filter(kind="analyze_page", page_id=page.id)
    return job


def test_first_request_inserts_a_job_and_a_pending_analysis_row(make_page):
    page = make_page()

    assert enqueue_for_page(page) is EnqueueForPageOutcome.INSERTED

    job = _only_job(page)
    assert (job.state, job.payload) == (
        JobState.PENDING,
        {"kind": "analyze_page", "page_id": str(page.id), "force": False},
    )
    assert PageAnalysis.objects.get(page=page).state == PageAnalysis.State.PENDING


def test_repeat_request_while_pending_is_skipped(make_page):
    page = make_page()
    enqueue_for_page(page)

    assert enqueue_for_page(page) is EnqueueForPageOutcome.SKIPPED_PENDING
    assert _only_job(page).payload["force"] is False


def test_non_force_request_while_running_is_skipped_and_leaves_the_lease_alone(make_page):
    page = make_page()
    enqueue_for_page(page)
    lease = lease_one()

    assert enqueue_for_page(page) is EnqueueForPageOutcome.SKIPPED_PENDING
    job = _only_job(page)
    assert (job.state, job.lease_generation) == (JobState.RUNNING, lease.lease_generation)


def test_force_request_upgrades_a_pending_non_force_job_in_place(make_page):
    page = make_page()
    enqueue_for_page(page)
    before = _only_job(page)

    assert enqueue_for_page(page, force=True) is EnqueueForPageOutcome.UPGRADED_PENDING

    after = _only_job(page)
    assert after.id == before.id
    assert after.payload["force"] is True
    assert (after.state, after.lease_generation, after.attempts) == (JobState.PENDING, 0, 0)


def test_force_request_on_an_already_forced_pending_job_changes_nothing(make_page):
    page = make_page()
    enqueue_for_page(page, force=True)

    assert enqueue_for_page(page, force=True) is EnqueueForPageOutcome.ALREADY_FORCED
    assert _only_job(page).payload["force"] is True


def test_force_request_releases_a_running_job_and_refreshes_its_payload(make_page):
    page = make_page()
    enqueue_for_page(page)
    lease = lease_one()

    assert enqueue_for_page(page, force=True) is EnqueueForPageOutcome.RELEASED_RUNNING

    job = _only_job(page)
    assert job.state == JobState.PENDING
    assert job.payload["force"] is True
    assert job.lease_generation == lease.lease_generation + 1  # the in-flight worker's ack is now a no-op
    assert job.attempts == 0  # the operator's click is not the job's failure
    assert queue.ack_done(lease) is False
    # The refreshed job is what the next worker leases.
    successor = lease_one()
    assert successor.payload == AnalyzePage(page_id=page.id, force=True)


def test_force_request_falls_through_to_insert_when_the_sibling_drains_mid_call(make_page, monkeypatch):
    page = make_page()
    enqueue_for_page(page)
    lease = lease_one()
    real_enqueue = queue.enqueue

    def enqueue_then_sibling_finishes(payload, **kwargs):
        result = real_enqueue(payload, **kwargs)
        if result.skipped:
            queue.ack_done(lease)  # the worker finishes the in-flight job right after our insert collided
        return result

    monkeypatch.setattr(queue, "enqueue", enqueue_then_sibling_finishes)

    assert enqueue_for_page(page, force=True) is EnqueueForPageOutcome.FELL_THROUGH_INSERTED

    jobs = Job.objects.filter(page_id=page.id).order_by("created_at")
    assert [(j.state, j.payload["force"]) for j in jobs] == [(JobState.DONE, False), (JobState.PENDING, True)]


def test_force_request_gives_up_loudly_when_the_sibling_never_settles(make_page, monkeypatch):
    page = make_page()
    enqueue_for_page(page)
    lease_one()
    monkeypatch.setattr(retry, "release_unowned", lambda job_id: False)  # always lost to another actor

    with pytest.raises(service.EnqueueContended):
        enqueue_for_page(page, force=True)
    assert _only_job(page).payload["force"] is False


def test_existing_analysis_row_is_kept(make_page):
    page = make_page()
    PageAnalysis.objects.create(page=page, state=PageAnalysis.State.DONE, ocr_text="kept", duration_ms=10)

    enqueue_for_page(page, force=True)

    row = PageAnalysis.objects.get(page=page)
    assert (row.state, row.ocr_text, row.duration_ms) == (PageAnalysis.State.DONE, "kept", 10)
