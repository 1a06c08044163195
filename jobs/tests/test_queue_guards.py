"""Every lease guard of the queue, one named regression test each.

Lease identity is `(id, lease_generation)`: a late ack, renew or release from
a lease that was released, reclaimed or expired and re-leased must update
nothing, so the successor's work is never clobbered.
"""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analysis.payloads import AnalyzePage
from crawler.payloads import SyncChapterContent
from jobs import housekeeping, ownership, queue, retry
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

LEASE = timedelta(minutes=5)


def _enqueue_page_job() -> uuid.UUID:
    result = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    assert result.inserted and result.id is not None
    return result.id


def _lease_one() -> queue.Lease:
    (lease,) = queue.lease(None, 1, LEASE)
    return lease


def _expire(job_id: uuid.UUID) -> None:
    """Make a held lease lapse, as if its worker stopped heartbeating an hour ago."""
    Job.objects.filter(id=job_id).update(leased_until=timezone.now() - timedelta(hours=1))


def _released_then_re_leased(**enqueue_kwargs) -> tuple[uuid.UUID, queue.Lease, queue.Lease]:
    """Lease A, drop it by id with release_unowned (force-analyze), then lease B on the same row."""
    job_id = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()), **enqueue_kwargs).id
    original = _lease_one()
    assert retry.release_unowned(job_id)
    successor = _lease_one()
    assert successor.id == original.id == job_id
    assert successor.lease_generation > original.lease_generation
    return job_id, original, successor


def _stolen_after_expiry() -> tuple[uuid.UUID, queue.Lease, queue.Lease]:
    """Lease A, let it lapse (A stopped heartbeating), then B steals the expired lease."""
    job_id = _enqueue_page_job()
    lease_a = _lease_one()
    _expire(job_id)
    lease_b = _lease_one()
    assert lease_a.id == lease_b.id == job_id
    assert lease_a.lease_generation != lease_b.lease_generation
    return job_id, lease_a, lease_b


def _finished_lease() -> tuple[uuid.UUID, queue.Lease]:
    job_id = _enqueue_page_job()
    lease = _lease_one()
    assert queue.ack_done(lease)
    return job_id, lease


def _snapshot(job_id: uuid.UUID) -> dict:
    return Job.objects.filter(id=job_id).values(
        "state", "attempts", "lease_generation", "leased_until", "scheduled_at", "last_error", "updated_at"
    )[0]


def test_lease_assigns_strictly_increasing_generation_per_release():
    job_id = _enqueue_page_job()
    generations = []
    first = _lease_one()
    generations.append(first.lease_generation)
    assert retry.release(first)
    generations.append(Job.objects.get(id=job_id).lease_generation)
    second = _lease_one()
    generations.append(second.lease_generation)
    assert retry.release_unowned(job_id)
    generations.append(Job.objects.get(id=job_id).lease_generation)
    third = _lease_one()
    generations.append(third.lease_generation)
    _expire(job_id)
    assert housekeeping.reclaim_orphaned() == 1
    generations.append(Job.objects.get(id=job_id).lease_generation)
    fourth = _lease_one()
    generations.append(fourth.lease_generation)

    assert {first.id, second.id, third.id, fourth.id} == {job_id}
    assert generations == [1, 2, 3, 4, 5, 6, 7]


def test_ack_done_from_dead_lease_after_release_unowned_is_a_no_op():
    job_id, original, successor = _released_then_re_leased()
    before = _snapshot(job_id)

    assert queue.ack_done(original) is False

    assert _snapshot(job_id) == before
    assert before["state"] == JobState.RUNNING
    assert queue.ack_done(successor) is True
    assert Job.objects.get(id=job_id).state == JobState.DONE


def test_ack_done_from_dead_lease_on_released_pending_row_is_a_no_op():
    job_id = _enqueue_page_job()
    original = _lease_one()
    assert retry.release_unowned(job_id)
    before = _snapshot(job_id)

    assert queue.ack_done(original) is False

    assert _snapshot(job_id) == before
    assert before["state"] == JobState.PENDING


def test_ack_failed_from_dead_lease_after_release_unowned_is_a_no_op():
    job_id, original, successor = _released_then_re_leased(max_attempts=1)
    before = _snapshot(job_id)

    # attempts >= max_attempts: a current lease would go dead; a stale one must not.
    assert retry.ack_failed(original, "stale failure") is False

    assert _snapshot(job_id) == before
    assert before["state"] == JobState.RUNNING
    assert before["last_error"] == ""
    assert retry.ack_failed(successor, "real failure") is True
    assert Job.objects.get(id=job_id).state == JobState.DEAD


def test_renew_from_dead_lease_is_a_no_op():
    job_id, original, successor = _released_then_re_leased()
    before = _snapshot(job_id)

    assert ownership.renew(original, timedelta(hours=10)) is False

    assert _snapshot(job_id) == before
    assert ownership.renew(successor, timedelta(hours=10)) is True
    assert Job.objects.get(id=job_id).leased_until > before["leased_until"]


def test_renew_many_extends_current_leases_and_leaves_out_dead_ones():
    job_id, original, successor = _released_then_re_leased()
    other_id = _enqueue_page_job()
    other = _lease_one()
    before = _snapshot(job_id)

    # The stale lease is not held any more; the successor and the other job are, and are extended.
    assert ownership.renew_many([original, other], timedelta(hours=10)) == {other_id}
    assert _snapshot(job_id) == before
    assert ownership.renew_many([successor, other], timedelta(hours=10)) == {job_id, other_id}
    assert Job.objects.get(id=job_id).leased_until > before["leased_until"]
    assert Job.objects.get(id=other_id).leased_until > timezone.now() + timedelta(hours=9)
    assert ownership.renew_many([], timedelta(hours=10)) == set()


def test_renew_many_is_one_statement_while_every_lease_is_held():
    """A heartbeat over several leases sends one UPDATE, not one per lease (nor a savepoint around them)."""
    held = [_enqueue_page_job() for _ in range(3)]
    leases = [_lease_one() for _ in held]

    with CaptureQueriesContext(connection) as statements:
        assert ownership.renew_many(leases, timedelta(hours=10)) == set(held)

    assert len(statements) == 1
    assert statements[0]["sql"].lstrip().upper().startswith("UPDATE")


def test_release_unowned_bumps_generation_even_when_lease_is_held():
    job_id = _enqueue_page_job()
    held = _lease_one()
    assert Job.objects.get(id=job_id).leased_until > timezone.now()  # live, unexpired lease

    assert retry.release_unowned(job_id) is True

    row = Job.objects.get(id=job_id)
    assert row.state == JobState.PENDING
    assert row.lease_generation == held.lease_generation + 1
    assert row.attempts == 0  # the operator's click is not the job's failure
    assert row.leased_until is None
    assert queue.ack_done(held) is False
    assert Job.objects.get(id=job_id).state == JobState.PENDING


def test_release_unowned_is_a_no_op_when_not_running():
    job_id = _enqueue_page_job()
    before = _snapshot(job_id)
    assert retry.release_unowned(job_id) is False
    assert _snapshot(job_id) == before


def test_ack_done_no_ops_when_lease_was_stolen():
    job_id, lease_a, lease_b = _stolen_after_expiry()
    assert lease_a.lease_generation != lease_b.lease_generation  # two distinct leases of one row
    before = _snapshot(job_id)

    assert queue.ack_done(lease_a) is False

    # A's stale ack did not clobber B's running row.
    assert _snapshot(job_id) == before
    assert before["state"] == JobState.RUNNING
    assert before["lease_generation"] == lease_b.lease_generation
    assert queue.ack_done(lease_b) is True
    assert Job.objects.get(id=job_id).state == JobState.DONE


def test_ack_failed_no_ops_when_lease_was_stolen():
    job_id, lease_a, lease_b = _stolen_after_expiry()
    before = _snapshot(job_id)

    assert retry.ack_failed(lease_a, "late failure from A") is False

    assert _snapshot(job_id) == before
    assert ownership.renew(lease_b, LEASE) is True


def test_release_no_ops_when_lease_was_stolen():
    job_id, lease_a, lease_b = _stolen_after_expiry()
    before = _snapshot(job_id)

    assert retry.release(lease_a) is False

    assert _snapshot(job_id) == before
    assert before["attempts"] == 2  # A's release did not refund B's attempt
    assert before["lease_generation"] == lease_b.lease_generation


def test_ack_failed_no_ops_when_state_is_not_running():
    job_id, lease = _finished_lease()
    before = _snapshot(job_id)

    assert retry.ack_failed(lease, "too late") is False

    assert _snapshot(job_id) == before
    assert before["state"] == JobState.DONE
    assert before["last_error"] == ""


def test_release_no_ops_when_state_is_not_running():
    job_id, lease = _finished_lease()
    before = _snapshot(job_id)

    assert retry.release(lease) is False

    assert _snapshot(job_id) == before
    assert before["state"] == JobState.DONE
    assert before["attempts"] == 1


def test_ack_done_twice_is_a_no_op_the_second_time():
    _enqueue_page_job()
    lease = _lease_one()
    assert queue.ack_done(lease) is True
    assert queue.ack_done(lease) is False


def test_reclaim_orphaned_resets_only_expired_running_jobs():
    expired_id = queue.enqueue(SyncChapterContent(source_id="s", chapter_id=uuid.uuid4(), source_chapter_key="1")).id
    live_id = queue.enqueue(SyncChapterContent(source_id="s", chapter_id=uuid.uuid4(), source_chapter_key="2")).id
    leases = {lease.id: lease for lease in queue.lease(None, 2, LEASE)}
    pending_id = _enqueue_page_job()
    done_id = _enqueue_page_job()
    done_lease = queue.lease(["analyze_page"], 2, LEASE)
    for lease in done_lease:
        if lease.id == done_id:
            assert queue.ack_done(lease)
        else:
            assert retry.release(lease)
    _expire(expired_id)
    live_before, pending_before, done_before = (_snapshot(i) for i in (live_id, pending_id, done_id))

    assert housekeeping.reclaim_orphaned() == 1

    reclaimed = Job.objects.get(id=expired_id)
    assert reclaimed.state == JobState.PENDING
    assert reclaimed.attempts == 0  # the crash does not count against max_attempts
    assert reclaimed.lease_generation == leases[expired_id].lease_generation + 1
    assert reclaimed.leased_until is None
    assert _snapshot(live_id) == live_before  # a heartbeating peer's lease is never stolen
    assert _snapshot(pending_id) == pending_before
    assert _snapshot(done_id) == done_before
    assert queue.ack_done(leases[expired_id]) is False
    assert queue.ack_done(leases[live_id]) is True
    assert housekeeping.reclaim_orphaned() == 0


def test_ack_done_many_acks_a_lapsed_unclaimed_lease_and_steps_aside_for_a_stale_one():
    job_id, original, successor = _released_then_re_leased()
    lapsed_id = _enqueue_page_job()
    lapsed = _lease_one()
    _expire(lapsed_id)  # done, but its lease ran out before the ack: still this worker's to ack

    assert queue.ack_done_many([original, lapsed]) == 1  # the stale lease stepped aside

    assert Job.objects.get(id=lapsed_id).state == JobState.DONE
    row = Job.objects.get(id=job_id)
    assert (row.state, row.lease_generation) == (JobState.RUNNING, successor.lease_generation)


def test_ack_done_many_and_lease_acks_current_leases_only_and_never_claims_what_it_acks():
    job_id, original, successor = _released_then_re_leased()
    lapsed_id = _enqueue_page_job()
    lapsed = _lease_one()
    _expire(lapsed_id)  # done, but its lease ran out before the ack: still this worker's to ack
    waiting_id = _enqueue_page_job()

    acked, leases = queue.ack_done_many_and_lease([original, lapsed], None, 10, LEASE)

    assert acked == 1  # the stale lease stepped aside
    assert [lease.id for lease in leases] == [waiting_id]  # the lapsed row was acked, not claimed again
    assert Job.objects.get(id=lapsed_id).state == JobState.DONE
    row = Job.objects.get(id=job_id)
    assert (row.state, row.lease_generation) == (JobState.RUNNING, successor.lease_generation)
