"""`housekeeping.upgrade_pending_payload`: a compare-and-set on a still-pending job's payload (force-analyze)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from analysis.payloads import AnalyzePage
from jobs import housekeeping, queue
from jobs.models import Job

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def test_upgrade_pending_payload_replaces_a_pending_jobs_payload():
    page_id = uuid.uuid4()
    job_id = queue.enqueue(AnalyzePage(page_id=page_id)).id

    assert housekeeping.upgrade_pending_payload(job_id, AnalyzePage(page_id=page_id, force=True)) is True

    job = Job.objects.get(id=job_id)
    assert job.payload == {"kind": "analyze_page", "page_id": str(page_id), "force": True}
    assert (job.state, job.lease_generation, job.attempts) == ("pending", 0, 0)


def test_upgrade_pending_payload_refuses_a_payload_for_another_dedup_key():
    job_id = queue.enqueue(AnalyzePage(page_id=uuid.uuid4())).id

    assert housekeeping.upgrade_pending_payload(job_id, AnalyzePage(page_id=uuid.uuid4(), force=True)) is False
    assert Job.objects.get(id=job_id).payload["force"] is False


def test_upgrade_pending_payload_no_ops_once_the_job_is_leased():
    page_id = uuid.uuid4()
    job_id = queue.enqueue(AnalyzePage(page_id=page_id)).id
    queue.lease(["analyze_page"], 1, timedelta(minutes=1))

    assert housekeeping.upgrade_pending_payload(job_id, AnalyzePage(page_id=page_id, force=True)) is False
    assert Job.objects.get(id=job_id).payload["force"] is False
