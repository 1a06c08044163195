"""`ack_dead` (deterministic failures) and `defer` (Retry-After): fenced like every guarded write."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from analysis.payloads import AnalyzePage
from jobs import queue, requeue, retry
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

LEASE = timedelta(minutes=5)


def _lease_new() -> queue.Lease:
    queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    (lease,) = queue.lease(None, 1, LEASE)
    return lease


def test_ack_dead_dead_letters_on_the_first_attempt_with_the_reason():
    lease = _lease_new()
    assert lease.attempts == 1 < lease.max_attempts
    assert retry.ack_dead(lease, "SourceConfigError: selector 'ul.x' matched nothing")
    job = Job.objects.get(id=lease.id)
    assert job.state == JobState.DEAD
    assert job.last_error == "SourceConfigError: selector 'ul.x' matched nothing"
    assert job.leased_until is None


def test_ack_dead_from_a_stale_lease_is_a_no_op():
    lease = _lease_new()
    assert retry.release(lease)
    (successor,) = queue.lease(None, 1, LEASE)
    assert not retry.ack_dead(lease, "late")
    assert Job.objects.get(id=lease.id).state == JobState.RUNNING
    assert queue.ack_done(successor)


def test_defer_reschedules_without_burning_an_attempt():
    lease = _lease_new()
    until = timezone.now() + timedelta(minutes=2)
    assert retry.defer(lease, until, "RetryLater: 429")
    job = Job.objects.get(id=lease.id)
    assert (job.state, job.attempts, job.deferrals) == (JobState.PENDING, 0, 1)
    assert job.scheduled_at == until
    assert job.lease_generation == lease.lease_generation + 1
    assert queue.lease(None, 1, LEASE) == []  # not before `until`


def test_defer_past_the_bound_dead_letters_with_a_reason_naming_the_setting(settings):
    settings.JOBS_MAX_DEFERRALS = 2
    for _ in range(2):
        lease = _lease_new() if _ == 0 else queue.lease(None, 1, LEASE)[0]
        assert retry.defer(lease, timezone.now() - timedelta(seconds=1), "RetryLater: 429")
    (third,) = queue.lease(None, 1, LEASE)
    assert retry.defer(third, timezone.now(), "RetryLater: 429 again")
    job = Job.objects.get(id=third.id)
    assert job.state == JobState.DEAD
    assert "JOBS_MAX_DEFERRALS" in job.last_error and "429 again" in job.last_error


def test_defer_from_a_stale_lease_is_a_no_op():
    lease = _lease_new()
    assert retry.release(lease)
    (successor,) = queue.lease(None, 1, LEASE)
    assert not retry.defer(lease, timezone.now() + timedelta(hours=1), "late")
    job = Job.objects.get(id=lease.id)
    assert (job.state, job.deferrals) == (JobState.RUNNING, 0)
    assert queue.ack_done(successor)


def test_requeue_of_a_dead_job_resets_its_deferrals(settings):
    settings.JOBS_MAX_DEFERRALS = 1
    lease = _lease_new()
    assert retry.defer(lease, timezone.now() - timedelta(seconds=1), "429")
    (again,) = queue.lease(None, 1, LEASE)
    assert retry.defer(again, timezone.now(), "429")
    assert Job.objects.get(id=lease.id).state == JobState.DEAD
    assert requeue.requeue_dead("job", lease.id) == 1
    assert Job.objects.get(id=lease.id).deferrals == 0
