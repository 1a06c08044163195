"""Queue lifecycle on one connection: enqueue dedup, lease order, retries, release, reaping, dead letters."""

import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from analysis.payloads import AnalyzePage
from crawler.payloads import MetadataPass, Reconcile, SyncChapterContent, SyncManga
from jobs import housekeeping, ownership, queue, retry
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

LEASE = timedelta(minutes=5)


def _chapter_job(number: int) -> SyncChapterContent:
    return SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key=f"ch-{number}")


def _make_due(job_id: uuid.UUID) -> None:
    """Skip a retry's backoff, as if its time had come."""
    Job.objects.filter(id=job_id).update(scheduled_at=timezone.now() - timedelta(seconds=1))


def _insert_raw(kind: str, payload, *, dedup_key: str | None = None) -> uuid.UUID:
    """A row written outside `enqueue` (an older release, a hand edit): its payload may not decode."""
    now = timezone.now() - timedelta(seconds=5)
    job = Job.objects.create(
        kind=kind, payload=payload, scheduled_at=now, created_at=now, updated_at=now, dedup_key=dedup_key
    )
    return job.id


# --- enqueue and dedup ---------------------------------------------------------------


def test_enqueue_inserts_a_pending_job_with_its_dedup_key_and_row_refs():
    chapter_id = uuid.uuid4()
    result = queue.enqueue(SyncChapterContent(source_id="demo", chapter_id=chapter_id, source_chapter_key="c1"))

    assert result.inserted and not result.skipped
    job = Job.objects.get(id=result.id)
    assert job.state == JobState.PENDING
    assert job.kind == "sync_chapter_content"
    assert job.attempts == 0 and job.lease_generation == 0
    assert job.dedup_key == f"sync_chapter_content:{chapter_id}"
    assert job.chapter_id == chapter_id
    assert job.payload == {
        "kind": "sync_chapter_content",
        "source_id": "demo",
        "chapter_id": str(chapter_id),
        "source_chapter_key": "c1",
    }


def test_enqueue_uses_configured_max_attempts_unless_given(settings):
    settings.JOBS_MAX_ATTEMPTS = 4
    default = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    explicit = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()), max_attempts=9)
    assert Job.objects.get(id=default.id).max_attempts == 4
    assert Job.objects.get(id=explicit.id).max_attempts == 9


def test_enqueue_rejects_a_non_positive_max_attempts_and_inserts_nothing():
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        queue.enqueue(AnalyzePage(page_id=uuid.uuid4()), max_attempts=0)
    assert not Job.objects.exists()


def test_second_enqueue_of_an_in_flight_key_is_skipped():
    page_id = uuid.uuid4()
    first = queue.enqueue(AnalyzePage(page_id=page_id))
    second = queue.enqueue(AnalyzePage(page_id=page_id, force=True))

    assert first.inserted
    assert second.skipped and second.id is None
    assert Job.objects.count() == 1


def test_enqueue_is_skipped_while_the_key_is_running():
    page_id = uuid.uuid4()
    queue.enqueue(AnalyzePage(page_id=page_id))
    queue.lease(None, 1, LEASE)
    assert queue.enqueue(AnalyzePage(page_id=page_id)).skipped
    assert Job.objects.count() == 1


def test_dedup_is_per_kind():
    assert queue.enqueue(MetadataPass(source_id="demo")).inserted
    assert queue.enqueue(Reconcile(source_id="demo")).inserted
    assert queue.enqueue(MetadataPass(source_id="other")).inserted
    assert queue.enqueue(MetadataPass(source_id="demo")).skipped
    assert queue.enqueue(Reconcile(source_id="demo")).skipped
    assert queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title="A")).inserted
    assert queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title="B")).skipped
    assert Job.objects.count() == 4


def test_enqueue_inserts_again_once_the_previous_job_is_done():
    payload = MetadataPass(source_id="demo")
    queue.enqueue(payload)
    (lease,) = queue.lease(None, 1, LEASE)
    assert queue.ack_done(lease)

    again = queue.enqueue(payload)

    assert again.inserted
    assert sorted(Job.objects.values_list("state", flat=True)) == ["done", "pending"]


def test_enqueue_inserts_again_once_the_previous_job_is_dead():
    payload = Reconcile(source_id="demo")
    queue.enqueue(payload, max_attempts=1)
    (lease,) = queue.lease(None, 1, LEASE)
    assert retry.ack_failed(lease, "source down")

    again = queue.enqueue(payload)

    assert again.inserted
    assert sorted(Job.objects.values_list("state", flat=True)) == ["dead", "pending"]


def test_enqueue_many_reports_each_outcome_and_inserts_a_repeated_key_once():
    page_id = uuid.uuid4()
    queue.enqueue(MetadataPass(source_id="busy"))
    results = queue.enqueue_many(
        [AnalyzePage(page_id=page_id), AnalyzePage(page_id=page_id), MetadataPass("s"), MetadataPass("busy")]
    )
    assert [r.inserted for r in results] == [True, False, True, False]
    assert Job.objects.filter(dedup_key=AnalyzePage(page_id=page_id).dedup_key()).count() == 1
    assert Job.objects.count() == 3


def test_enqueue_many_applies_schedule_and_max_attempts_to_every_row():
    later = timezone.now() + timedelta(hours=2)
    results = queue.enqueue_many([_chapter_job(1), _chapter_job(2)], scheduled_at=later, max_attempts=2)
    rows = Job.objects.filter(id__in=[r.id for r in results])
    assert {row.max_attempts for row in rows} == {2}
    assert {row.scheduled_at for row in rows} == {later}
    assert queue.lease(None, 10, LEASE) == []


def test_enqueue_many_order_survives_to_lease_order_across_insert_chunks():
    payloads = [_chapter_job(n) for n in range(queue.ENQUEUE_CHUNK * 2 + 100)]
    results = queue.enqueue_many(payloads)
    _assert_strictly_increasing_created_at([r.id for r in results])

    leased = []
    while batch := queue.lease(None, 400, LEASE):
        leased.extend(batch)

    assert [lease.payload for lease in leased] == payloads


# --- lease order and eligibility -----------------------------------------------------


def _assert_strictly_increasing_created_at(ids: list) -> None:
    """created_at is lease's tie-break among rows due together: it must follow enqueue order with no ties."""
    created = dict(Job.objects.filter(id__in=ids).values_list("id", "created_at"))
    in_enqueue_order = [created[job_id] for job_id in ids]
    assert all(a < b for a, b in zip(in_enqueue_order, in_enqueue_order[1:], strict=False))


def test_chapter_number_insertion_order_survives_to_lease_order():
    # Enqueued in ascending chapter number inside one transaction, where the
    # database clock's now() does not move: order must still hold.
    payloads = [_chapter_job(n) for n in range(1, 13)]
    with transaction.atomic():
        ids = [queue.enqueue(payload).id for payload in payloads]
    _assert_strictly_increasing_created_at(ids)

    leased = []
    while batch := queue.lease(["sync_chapter_content"], 5, LEASE):
        leased.extend(batch)

    assert [lease.payload for lease in leased] == payloads


def test_lease_orders_by_scheduled_at_before_created_at():
    later = queue.enqueue(_chapter_job(1), scheduled_at=timezone.now() - timedelta(minutes=1))
    earlier = queue.enqueue(_chapter_job(2), scheduled_at=timezone.now() - timedelta(minutes=10))
    assert [lease.id for lease in queue.lease(None, 2, LEASE)] == [earlier.id, later.id]


def test_future_jobs_are_not_leased():
    future = queue.enqueue(_chapter_job(1), scheduled_at=timezone.now() + timedelta(hours=1))
    due = queue.enqueue(_chapter_job(2))
    assert [lease.id for lease in queue.lease(None, 10, LEASE)] == [due.id]
    assert Job.objects.get(id=future.id).state == JobState.PENDING


def test_lease_filters_by_kind_and_none_means_any():
    chapter = queue.enqueue(_chapter_job(1))
    page = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    manga = queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title=""))

    assert [lease.id for lease in queue.lease(["analyze_page"], 10, LEASE)] == [page.id]
    assert {lease.id for lease in queue.lease(["sync_manga", "sync_chapter_content"], 10, LEASE)} == {
        chapter.id,
        manga.id,
    }
    assert queue.lease(None, 10, LEASE) == []


def test_lease_with_an_empty_kind_list_takes_nothing():
    queue.enqueue(_chapter_job(1))
    assert queue.lease([], 10, LEASE) == []
    assert Job.objects.get().state == JobState.PENDING


def test_lease_any_kind_takes_every_kind():
    ids = {queue.enqueue(p).id for p in (_chapter_job(1), AnalyzePage(page_id=uuid.uuid4()), MetadataPass("s"))}
    assert {lease.id for lease in queue.lease(None, 10, LEASE)} == ids


def test_lease_skips_excluded_sources_but_not_jobs_without_a_source():
    walled = queue.enqueue(SyncManga(source_id="target", source_manga_key="k", url="", title=""))
    other = queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title=""))
    page = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))

    leased = {lease.id for lease in queue.lease(None, 10, LEASE, exclude_sources={"target"})}

    assert leased == {other.id, page.id}
    assert Job.objects.get(id=walled.id).state == JobState.PENDING
    assert [lease.id for lease in queue.lease(None, 10, LEASE)] == [walled.id]


def test_lease_claims_at_most_max_and_marks_them_running():
    for n in range(5):
        queue.enqueue(_chapter_job(n))
    leases = queue.lease(None, 3, LEASE)
    assert len(leases) == 3
    assert all(lease.attempts == 1 and lease.lease_generation == 1 for lease in leases)
    rows = Job.objects.filter(id__in=[lease.id for lease in leases])
    assert {row.state for row in rows} == {JobState.RUNNING}
    assert all(row.leased_until is not None for row in rows)
    assert queue.lease(None, 0, LEASE) == []
    assert Job.objects.filter(state=JobState.PENDING).count() == 2


def test_a_live_lease_is_not_leased_again_but_an_expired_one_is():
    job_id = queue.enqueue(_chapter_job(1)).id
    first = queue.lease(None, 1, LEASE)
    assert queue.lease(None, 1, LEASE) == []
    Job.objects.filter(id=job_id).update(leased_until=timezone.now() - timedelta(seconds=1))

    (second,) = queue.lease(None, 1, LEASE)

    assert second.id == first[0].id
    assert second.attempts == 2  # an expired lease burned its attempt
    assert second.lease_generation == 2


# --- undecodable payloads --------------------------------------------------------------


def test_unknown_kind_is_dead_lettered_at_lease_time_and_the_worker_gets_the_rest():
    bad = _insert_raw("teleport", {"kind": "teleport", "where": "moon"})
    good = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))

    leases = queue.lease(None, 10, LEASE)

    assert [lease.id for lease in leases] == [good.id]
    row = Job.objects.get(id=bad)
    assert row.state == JobState.DEAD
    assert row.last_error == "undecodable payload: unknown job kind 'teleport'"
    assert row.leased_until is None


def test_malformed_payload_is_dead_lettered_with_the_field_named():
    bad = _insert_raw("analyze_page", {"kind": "analyze_page", "page_id": "not-a-uuid"})
    missing = _insert_raw("analyze_page", {"kind": "analyze_page"})
    good = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))

    leases = queue.lease(["analyze_page"], 10, LEASE)

    assert [lease.id for lease in leases] == [good.id]
    assert (
        Job.objects.get(id=bad).last_error == "undecodable payload: field 'page_id' is not a valid UUID: 'not-a-uuid'"
    )
    assert (
        Job.objects.get(id=missing).last_error == "undecodable payload: analyze_page payload is missing field 'page_id'"
    )
    assert queue.lease(None, 10, LEASE) == []


def test_non_object_payload_is_dead_lettered():
    bad = _insert_raw("analyze_page", ["analyze_page"])
    assert queue.lease(None, 10, LEASE) == []
    assert Job.objects.get(id=bad).last_error == "undecodable payload: payload must be a JSON object, got list"


# --- finishing a lease -----------------------------------------------------------------


def test_ack_done_marks_done_and_clears_the_lease():
    job_id = queue.enqueue(_chapter_job(1)).id
    (lease,) = queue.lease(None, 1, LEASE)
    assert queue.ack_done(lease) is True
    row = Job.objects.get(id=job_id)
    assert row.state == JobState.DONE and row.leased_until is None


def test_ack_failed_returns_to_pending_after_a_jittered_backoff():
    job_id = queue.enqueue(_chapter_job(1), max_attempts=3).id
    (lease,) = queue.lease(None, 1, LEASE)

    assert retry.ack_failed(lease, "HTTP 503") is True

    row = Job.objects.get(id=job_id)
    assert row.state == JobState.PENDING
    assert row.last_error == "HTTP 503"
    assert row.leased_until is None
    assert row.attempts == 1
    # First failure: 60 s base, jitter in [0.8, 1.2).
    delay = (row.scheduled_at - row.updated_at).total_seconds()
    assert 48 <= delay <= 72
    assert queue.lease(None, 1, LEASE) == []  # not due before its backoff


def test_ack_failed_backoff_doubles_with_attempts():
    job_id = queue.enqueue(_chapter_job(1), max_attempts=5).id
    for _ in range(2):
        _make_due(job_id)
        (lease,) = queue.lease(None, 1, LEASE)
        retry.ack_failed(lease, "boom")
    row = Job.objects.get(id=job_id)
    assert row.attempts == 2
    assert 96 <= (row.scheduled_at - row.updated_at).total_seconds() <= 144


def test_ack_failed_goes_dead_at_max_attempts():
    job_id = queue.enqueue(_chapter_job(1), max_attempts=2).id
    (first,) = queue.lease(None, 1, LEASE)
    retry.ack_failed(first, "first failure")
    _make_due(job_id)
    (second,) = queue.lease(None, 1, LEASE)
    assert second.attempts == second.max_attempts == 2

    assert retry.ack_failed(second, "second failure") is True

    row = Job.objects.get(id=job_id)
    assert row.state == JobState.DEAD
    assert row.last_error == "second failure"
    assert row.leased_until is None
    _make_due(job_id)
    assert queue.lease(None, 1, LEASE) == []


def test_release_refunds_the_attempt_and_bumps_the_generation():
    job_id = queue.enqueue(_chapter_job(1), max_attempts=1).id
    (lease,) = queue.lease(None, 1, LEASE)

    assert retry.release(lease) is True

    row = Job.objects.get(id=job_id)
    assert row.state == JobState.PENDING
    assert row.attempts == 0
    assert row.lease_generation == lease.lease_generation + 1
    assert row.leased_until is None
    (again,) = queue.lease(None, 1, LEASE)
    assert again.attempts == 1  # a release never pushes a job toward dead


def test_renew_extends_a_current_lease():
    job_id = queue.enqueue(_chapter_job(1)).id
    (lease,) = queue.lease(None, 1, timedelta(seconds=30))
    before = Job.objects.get(id=job_id).leased_until
    assert ownership.renew(lease, timedelta(hours=2)) is True
    assert Job.objects.get(id=job_id).leased_until >= before + timedelta(minutes=90)


def test_ack_done_many_acks_current_leases_and_steps_aside_for_stale_ones():
    ids = [queue.enqueue(_chapter_job(n)).id for n in range(4)]
    leases = queue.lease(None, 4, LEASE)
    stolen = leases[1]
    assert retry.release_unowned(stolen.id)
    (successor,) = queue.lease(None, 1, LEASE)
    already_done = leases[2]
    assert queue.ack_done(already_done)

    assert queue.ack_done_many(leases) == 2

    states = dict(Job.objects.filter(id__in=ids).values_list("id", "state"))
    assert states[leases[0].id] == states[leases[3].id] == JobState.DONE
    assert states[stolen.id] == JobState.RUNNING  # the successor's row is untouched
    assert Job.objects.get(id=stolen.id).lease_generation == successor.lease_generation
    assert states[already_done.id] == JobState.DONE
    assert queue.ack_done_many([]) == 0
    assert queue.ack_done_many([successor]) == 1


# --- reaping -----------------------------------------------------------------------------


def _aged(job_id: uuid.UUID, state: str, days: int) -> None:
    Job.objects.filter(id=job_id).update(state=state, updated_at=timezone.now() - timedelta(days=days))


def test_reap_done_deletes_only_old_done_rows():
    old_done = queue.enqueue(_chapter_job(1)).id
    new_done = queue.enqueue(_chapter_job(2)).id
    old_dead = queue.enqueue(_chapter_job(3)).id
    old_pending = queue.enqueue(_chapter_job(4)).id
    _aged(old_done, JobState.DONE, 10)
    _aged(new_done, JobState.DONE, 2)
    _aged(old_dead, JobState.DEAD, 10)
    _aged(old_pending, JobState.PENDING, 10)

    assert housekeeping.reap_done(7) == 1

    assert set(Job.objects.values_list("id", flat=True)) == {new_done, old_dead, old_pending}


def test_reap_done_with_zero_retention_is_disabled():
    old_done = queue.enqueue(_chapter_job(1)).id
    _aged(old_done, JobState.DONE, 400)
    assert housekeeping.reap_done(0) == 0
    assert Job.objects.filter(id=old_done).exists()
