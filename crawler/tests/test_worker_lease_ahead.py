"""Lease-ahead: the pure decisions, then buffered leases against the real queue, one loop step at a time."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from crawler.errors import CrawlerError, SessionExpired, SourceUnavailable
from crawler.payloads import SyncChapterContent
from crawler.tests.test_worker_loop import KIND, enqueue_chapter, make_worker, wait_for_in_flight
from jobs import queue
from jobs.errors import JobCancelled
from jobs.models import Job, JobState
from jobs.worker.ahead import LeaseBuffer, lease_ahead_for, leases_wanted, typical_after

# --- pure ----------------------------------------------------------------------------------


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("ahead", "typical", "expected"),
    [(6, None, 0), (6, 0.001, 6), (6, 0.1, 6), (6, 0.2, 0), (0, 0.001, 0), (6, 30.0, 0)],
)
def test_leases_are_held_ahead_only_while_jobs_are_typically_short(ahead, typical, expected):
    assert lease_ahead_for(ahead, typical, max_job_secs=0.1) == expected


@pytest.mark.sqlite_ok
def test_typical_job_time_is_a_moving_average_starting_at_the_first_sample():
    assert typical_after(None, 2.0) == 2.0
    assert typical_after(1.0, 2.0, weight=0.25) == 1.25
    typical = 0.001
    for _ in range(20):  # a run of slow jobs turns lease-ahead off soon
        typical = typical_after(typical, 5.0)
    assert lease_ahead_for(6, typical, max_job_secs=0.1) == 0


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("free", "buffered", "ahead", "wanted"),
    [
        (0, 0, 0, 0),  # no lease-ahead, every slot busy: wait
        (3, 0, 0, 3),  # no lease-ahead: the free slots, as without a buffer
        (0, 0, 6, 10),  # slots busy, buffer empty: a whole batch while they run
        (2, 0, 6, 10),  # idle slots and the buffer: still one batch, not the free slots plus ahead
        (4, 0, 6, 10),  # every slot free: the batch fills them and the buffer
        (4, 0, 2, 6),
        (0, 1, 6, 0),  # the buffer still covers the next freed slot: no statement per slot
        (0, 6, 6, 0),
    ],
)
def test_leases_wanted_with_concurrency_4(free, buffered, ahead, wanted):
    assert leases_wanted(free, buffered, ahead, concurrency=4) == wanted


def _lease(n: int) -> queue.Lease:
    payload = SyncChapterContent(source_id=f"s{n}", chapter_id=uuid.uuid4(), source_chapter_key="k")
    return queue.Lease(uuid.uuid4(), payload, 1, 5, 1)


@pytest.mark.sqlite_ok
def test_lease_buffer_pops_oldest_first_and_discards_only_what_it_still_holds():
    buffer = LeaseBuffer()
    a, b, c = _lease(1), _lease(2), _lease(3)
    buffer.extend([a, b, c])
    assert buffer.pop() == a
    assert buffer.discard(b) is True
    assert buffer.discard(a) is False  # the loop took it already
    assert buffer.take_if(lambda lease: lease.payload.source_id == "s3") == [c]
    assert len(buffer) == 0 and buffer.pop() is None


# --- against the queue -----------------------------------------------------------------------


def job(job_id: uuid.UUID) -> Job:
    return Job.objects.get(id=job_id)


@pytest.fixture
def workers():
    made = []

    def make(handler, **overrides):
        options = {"concurrency": 1, "lease_ahead": 2, "lease_ahead_max_job_secs": 60.0, **overrides}
        worker = make_worker(handler, **options)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.shutdown(grace_secs=2)


def blocking_handler(started: threading.Semaphore, ran: list):
    def handler(payload, ctx):
        ran.append(ctx.lease.id)
        started.release()
        if ctx.cancel.wait(20):
            raise JobCancelled("stopping")

    return handler


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_lease_ahead_is_off_until_jobs_are_measured_short(workers):
    ids = [enqueue_chapter() for _ in range(3)]
    started, ran = threading.Semaphore(0), []
    worker = workers(blocking_handler(started, ran))
    assert worker.step() is True
    assert started.acquire(timeout=5)
    assert len(worker.buffered) == 0
    assert sorted(job(i).state for i in ids) == [JobState.PENDING, JobState.PENDING, JobState.RUNNING]


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_buffered_leases_are_released_on_shutdown_without_burning_attempts(workers):
    ids = [enqueue_chapter() for _ in range(3)]
    started, ran = threading.Semaphore(0), []
    worker = workers(blocking_handler(started, ran))
    worker.typical_job_secs = 0.01  # jobs measured short: lease ahead
    assert worker.step() is True
    assert started.acquire(timeout=5)
    assert len(worker.in_flight) == 1 and len(worker.buffered) == 2
    assert {(job(i).state, job(i).attempts) for i in ids} == {(JobState.RUNNING, 1)}

    worker.shutdown(grace_secs=5)
    assert len(ran) == 1
    assert {(job(i).state, job(i).attempts) for i in ids} == {(JobState.PENDING, 0)}


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_a_buffered_lease_that_was_lost_is_dropped_unrun(workers, caplog):
    first, second = enqueue_chapter(), enqueue_chapter()
    started, ran = threading.Semaphore(0), []
    worker = workers(blocking_handler(started, ran))
    worker.typical_job_secs = 0.01
    worker.step()
    assert started.acquire(timeout=5) and ran == [first]
    assert queue.release_unowned(second)  # an operator took the buffered job back

    worker.heartbeat()
    assert len(worker.buffered) == 0
    assert "lease lost" in caplog.text
    worker.in_flight[first].cancel.set()
    wait_for_in_flight(worker)
    assert ran == [first]  # never started on the lost lease
    row = job(second)
    assert (row.state, row.attempts, row.lease_generation) == (JobState.PENDING, 0, 2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_a_buffered_lease_of_a_source_that_hit_the_login_wall_is_given_back(workers):
    first, second = enqueue_chapter(), enqueue_chapter()
    ran = []

    def handler(payload, ctx):
        ran.append(ctx.lease.id)
        raise SessionExpired("login wall")

    worker = workers(handler)
    worker.typical_job_secs = 0.01
    worker.step()
    assert len(worker.buffered) == 1
    wait_for_in_flight(worker)
    assert worker.step() is False  # paused: the buffered lease is given back, not run
    assert ran == [first] and len(worker.buffered) == 0
    assert {(job(i).state, job(i).attempts) for i in (first, second)} == {(JobState.PENDING, 0)}


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_an_open_circuit_gives_the_buffered_leases_back(workers):
    ids = [enqueue_chapter() for _ in range(3)]

    def handler(payload, ctx):
        raise SourceUnavailable("down")

    worker = workers(handler, circuit_threshold=1)
    worker.typical_job_secs = 0.01
    worker.step()
    assert len(worker.buffered) == 2
    wait_for_in_flight(worker)
    assert worker.step() is False
    assert len(worker.buffered) == 0
    rows = sorted((job(i).state, job(i).attempts) for i in ids)
    assert rows == [(JobState.PENDING, 0), (JobState.PENDING, 0), (JobState.PENDING, 1)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_a_buffered_jobs_deadline_counts_from_when_it_starts(workers):
    _, second = enqueue_chapter(), enqueue_chapter()
    release = threading.Event()
    left_at_start: dict[uuid.UUID, float] = {}

    def handler(payload, ctx):
        left_at_start[ctx.lease.id] = worker.in_flight[ctx.lease.id].deadline - time.monotonic()
        release.wait(20)

    worker = workers(handler, job_timeout_secs=1.0)
    worker.typical_job_secs = 0.01
    worker.step()
    time.sleep(0.6)  # the buffered lease waits most of a timeout for its slot
    release.set()
    wait_for_in_flight(worker)

    assert left_at_start[second] > 0.8
    assert Job.objects.filter(kind=KIND, state=JobState.DONE).count() == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_short_jobs_run_back_to_back_on_their_thread_without_a_loop_step(workers):
    ids = [enqueue_chapter() for _ in range(3)]
    ran: list[tuple[uuid.UUID, str]] = []
    all_ran = threading.Event()

    def handler(payload, ctx):
        ran.append((ctx.lease.id, threading.current_thread().name))
        if len(ran) == 3:
            all_ran.set()

    worker = workers(handler)  # concurrency 1, two leases ahead
    worker.typical_job_secs = 0.01
    assert worker.step() is True

    assert all_ran.wait(5), "the buffered jobs waited for the loop"
    assert [job_id for job_id, _ in ran] == ids  # lease order
    assert len({thread for _, thread in ran}) == 1
    wait_for_in_flight(worker)
    assert {job(i).state for i in ids} == {JobState.DONE}


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_ok
def test_a_failed_job_stops_its_thread_from_starting_the_next_buffered_one(workers):
    first, second = enqueue_chapter(), enqueue_chapter()
    ran = []

    def handler(payload, ctx):
        ran.append(ctx.lease.id)
        if ctx.lease.id == first:
            raise CrawlerError("image download cut short")

    worker = workers(handler)
    worker.typical_job_secs = 0.01
    worker.step()
    deadline = time.monotonic() + 5
    while not worker.in_flight[first].finished:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.1)

    assert ran == [first] and len(worker.buffered) == 1  # the loop judges the failure first
    wait_for_in_flight(worker)
    assert worker.step() is True
    wait_for_in_flight(worker)
    assert ran == [first, second]
