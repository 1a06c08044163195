"""The shared lease loop, driven one step at a time in this process.

The handlers are the test's own (a handler that returns, raises, sleeps on
its cancel event or hits the login wall is legitimate input): the unit under
test is the loop's judgement of what the handler did, against the real queue.
Threads need committed rows, hence transactional tests.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from crawler import state_store
from crawler.payloads import SyncChapterContent
from crawler.workers.roles import CrawlHooks
from jobs import queue, retry
from jobs.errors import JobCancelled
from jobs.models import Job, JobState
from jobs.worker.loop import Periodic, Worker, WorkerConfig
from jobs.worker.status.handle import StatusHandle
from sources.errors import CrawlerError, NotFound, SessionExpired, SourceUnavailable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_ok]

KIND = SyncChapterContent.kind


def enqueue_chapter(source_id: str = "demo") -> uuid.UUID:
    result = queue.enqueue(SyncChapterContent(source_id=source_id, chapter_id=uuid.uuid4(), source_chapter_key="k"))
    assert result.id is not None
    return result.id


def make_worker(handler, *, clock=None, browser_factory=None, **overrides) -> Worker:
    status = StatusHandle(overrides.get("concurrency", 2))
    options = {
        "concurrency": 2,
        "hooks": CrawlHooks(status, browser_factory=browser_factory),
        "lease_secs": 30,
        "heartbeat_secs": 0.1,
        "job_timeout_secs": 30,
        "poll_secs": 0.1,
        "circuit_threshold": 2,
        "circuit_cooldown_secs": 60,
        **overrides,
    }
    return Worker(WorkerConfig(role="test", handlers={KIND: handler}, **options), status=status, clock=clock)


def wait_for_in_flight(worker: Worker, timeout: float = 10.0) -> None:
    """Let dispatched jobs finish and be judged, without leasing anything new."""
    assert worker.wait_until_settled(timeout), "jobs still in flight"


@pytest.fixture
def workers():
    """Workers made by a test are shut down after it (releasing anything still held)."""
    made: list[Worker] = []

    def make(*args, **kwargs) -> Worker:
        worker = make_worker(*args, **kwargs)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.shutdown(grace_secs=2)


def job(job_id: uuid.UUID) -> Job:
    return Job.objects.get(id=job_id)


def test_step_finds_no_work_on_an_empty_queue(workers):
    worker = workers(lambda payload, ctx: None)
    assert worker.step() is False


def test_step_leases_dispatches_and_acks_done(workers):
    seen = []
    job_id = enqueue_chapter()
    worker = workers(lambda payload, ctx: seen.append((payload.chapter_id, ctx.lease.id)))

    assert worker.step() is True
    wait_for_in_flight(worker)

    row = job(job_id)
    assert row.state == JobState.DONE
    assert row.attempts == 1
    assert seen and seen[0][1] == job_id
    assert worker.step() is False


def test_boot_reclaims_expired_leases_before_leasing(workers):
    job_id = enqueue_chapter()
    queue.lease([KIND], 1, timedelta(seconds=-1))  # a crashed worker's lease, already expired
    worker = workers(lambda payload, ctx: None)

    assert worker.boot() == 1
    row = job(job_id)
    assert (row.state, row.attempts) == (JobState.PENDING, 0)


def test_handler_error_is_acked_failed_with_backoff(workers):
    job_id = enqueue_chapter()

    def handler(payload, ctx):
        raise CrawlerError("image download cut short")

    worker = workers(handler)
    before = timezone.now()
    worker.step()
    wait_for_in_flight(worker)

    row = job(job_id)
    assert row.state == JobState.PENDING
    assert row.attempts == 1
    assert "cut short" in row.last_error
    assert row.scheduled_at >= before + timedelta(seconds=40)  # 60 s base, jitter down to 0.8x
    assert worker.step() is False  # not leasable until the backoff passes


def test_a_404_is_permanent_and_dead_letters_at_once(workers):
    job_id = enqueue_chapter()

    def handler(payload, ctx):
        raise NotFound("source 'demo': http://site.test/manga/x/chapter-1/ answered 404")

    worker = workers(handler)
    worker.step()
    wait_for_in_flight(worker)
    row = job(job_id)
    assert (row.state, row.attempts) == (JobState.DEAD, 1)
    assert row.last_error.endswith("answered 404")


def test_session_expired_releases_sets_flag_and_pauses_until_refreshed(workers):
    first, second = enqueue_chapter(), enqueue_chapter()
    wall = threading.Event()
    wall.set()
    done = []

    def handler(payload, ctx):
        if wall.is_set():
            raise SessionExpired("login wall")
        done.append(ctx.lease.id)

    worker = workers(handler, concurrency=1)
    worker.step()
    wait_for_in_flight(worker)

    row = job(first)
    assert (row.state, row.attempts) == (JobState.PENDING, 0)  # released: no attempt burned
    assert state_store.session_expired("demo") is True
    assert worker.step() is False  # paused, although two jobs are leasable
    assert job(second).state == JobState.PENDING
    assert worker.status.snapshot().flags["session_expired"] == ["demo"]

    wall.clear()
    state_store.store_session_cookie("demo", "refreshed")  # the operator's refresh, from any process
    assert worker.step() is True
    wait_for_in_flight(worker)
    worker.step()
    wait_for_in_flight(worker)
    assert {job(first).state, job(second).state} == {JobState.DONE}
    assert worker.status.snapshot().flags["session_expired"] == []


def test_an_expired_session_pauses_only_its_own_source(workers):
    walled = enqueue_chapter("target")
    other = enqueue_chapter("demo")
    ran = []

    def handler(payload, ctx):
        if payload.source_id == "target":
            raise SessionExpired("login wall")
        ran.append(payload.source_id)

    worker = workers(handler, concurrency=1)
    worker.step()
    wait_for_in_flight(worker)
    assert state_store.expired_sessions() == ["target"]

    assert worker.step() is True  # the demo source's job still runs
    wait_for_in_flight(worker)
    assert ran == ["demo"]
    assert job(other).state == JobState.DONE
    assert worker.step() is False  # only the walled source's job is left, and it waits
    assert (job(walled).state, job(walled).attempts) == (JobState.PENDING, 0)


def test_job_past_its_timeout_is_acked_failed_and_its_cancel_event_set(workers):
    job_id = enqueue_chapter()
    cancelled = threading.Event()

    def handler(payload, ctx):
        # A healthy handler notices its cancel event between pages.
        with ctx.status.begin_chapter(manga_id="m", manga_title="M", chapter_id="c", chapter_number=1):
            if ctx.cancel.wait(20):
                cancelled.set()
                raise JobCancelled("cancelled")

    worker = workers(handler, job_timeout_secs=0.3)
    before = timezone.now()
    worker.step()
    wait_for_in_flight(worker)

    assert cancelled.is_set()
    row = job(job_id)
    assert row.state == JobState.PENDING
    assert row.attempts == 1
    assert row.last_error == "timed out after 0.3 s"
    assert row.scheduled_at >= before + timedelta(seconds=40)
    # The chapter's live entry was cleared when the timed-out handler unwound.
    assert worker.status.snapshot().active_chapters == []


def test_heartbeat_keeps_a_long_job_leased_past_its_lease_duration(workers):
    job_id = enqueue_chapter()
    release = threading.Event()
    worker = workers(lambda payload, ctx: release.wait(20), lease_secs=2, heartbeat_secs=0.2)
    worker.step()

    deadline = time.monotonic() + 5  # two and a half lease durations
    while time.monotonic() < deadline:
        # A second worker looking for work never gets the running job.
        assert queue.lease([KIND], 1, timedelta(seconds=30)) == []
        time.sleep(0.1)
    release.set()
    wait_for_in_flight(worker)

    row = job(job_id)
    assert (row.state, row.attempts, row.lease_generation) == (JobState.DONE, 1, 1)


def test_lost_lease_cancels_the_job_and_never_acks(workers, caplog):
    job_id = enqueue_chapter()
    started = threading.Event()
    cancelled: list[bool] = []

    def handler(payload, ctx):
        started.set()
        cancelled.append(ctx.cancel.wait(10))  # returns normally: the loop must still not ack

    worker = workers(handler)
    worker.step()
    assert started.wait(5)
    assert retry.release_unowned(job_id)  # an operator force path: generation bumped

    wait_for_in_flight(worker)
    assert cancelled == [True]
    assert "lease lost" in caplog.text
    # No ack was even attempted (a stale one would log the queue's warning).
    assert "ack_done" not in caplog.text and "ack_failed" not in caplog.text
    row = job(job_id)
    assert (row.state, row.attempts, row.lease_generation) == (JobState.PENDING, 0, 2)


def test_shutdown_releases_in_flight_leases_without_burning_attempts(workers):
    ids = [enqueue_chapter(), enqueue_chapter()]
    started = threading.Semaphore(0)

    def handler(payload, ctx):
        started.release()
        if ctx.cancel.wait(20):
            raise JobCancelled("stopping")

    worker = workers(handler)
    worker.step()
    assert started.acquire(timeout=5) and started.acquire(timeout=5)
    worker.shutdown(grace_secs=5)

    for job_id in ids:
        row = job(job_id)
        assert (row.state, row.attempts) == (JobState.PENDING, 0)
    assert worker.running_jobs() == []


def test_outage_failures_open_the_circuit_and_pause_leasing(workers):
    ids = [enqueue_chapter() for _ in range(5)]
    now = [timezone.now()]

    def handler(payload, ctx):
        raise SourceUnavailable("503 Service Unavailable")

    worker = workers(handler, clock=lambda: now[0], concurrency=1, circuit_threshold=2, circuit_cooldown_secs=60)
    for _ in range(2):
        assert worker.step() is True
        wait_for_in_flight(worker)

    assert worker.step() is False  # open: three jobs left untouched
    attempts = sorted(job(i).attempts for i in ids)
    assert attempts == [0, 0, 0, 1, 1]
    assert worker.status.snapshot().flags["circuit_open_until"] is not None

    now[0] += timedelta(seconds=61)  # cool-down over: half-open, one probe job
    assert worker.step() is True
    wait_for_in_flight(worker)
    assert worker.step() is False  # the probe failed too: open again at once
    assert sorted(job(i).attempts for i in ids) == [0, 0, 1, 1, 1]
    assert all(job(i).state != JobState.DEAD for i in ids)


def test_non_outage_failures_do_not_open_the_circuit(workers):
    for _ in range(3):
        enqueue_chapter()

    def handler(payload, ctx):
        raise CrawlerError("one bad chapter")

    worker = workers(handler, concurrency=1, circuit_threshold=2)
    for _ in range(3):
        assert worker.step() is True
        wait_for_in_flight(worker)
    assert worker.status.snapshot().flags.get("circuit_open_until") is None


def test_run_drain_exits_when_nothing_is_leasable(workers):
    ids = [enqueue_chapter() for _ in range(3)]
    worker = workers(lambda payload, ctx: None)

    assert worker.run(drain=True, install_signals=False) == 0
    assert {job(i).state for i in ids} == {JobState.DONE}


def test_browser_restart_request_reaches_a_running_worker(workers):
    class RecordingBrowser:
        state = "running"
        restarts = 0

        def restart(self):
            self.restarts += 1

        def close(self):
            pass

    browser = RecordingBrowser()
    worker = workers(lambda payload, ctx: None, browser_factory=lambda: browser)
    worker.boot()
    enqueue_chapter()
    worker.step()  # the job's context builds the role's one browser
    wait_for_in_flight(worker)
    assert browser.restarts == 0

    state_store.request_browser_restart()
    worker.step()
    deadline = time.monotonic() + 5
    while browser.restarts == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert browser.restarts == 1
    worker.step()
    time.sleep(0.1)
    assert browser.restarts == 1


def test_browser_restart_request_does_not_launch_a_browser_that_never_ran(workers):
    class IdleBrowser:
        state = "idle"
        restarts = 0

        def restart(self):
            self.restarts += 1

        def close(self):
            pass

    browser = IdleBrowser()
    worker = workers(lambda payload, ctx: None, browser_factory=lambda: browser)
    worker.boot()
    enqueue_chapter()
    worker.step()  # the job's context builds the browser manager; Chromium never launched
    wait_for_in_flight(worker)
    state_store.request_browser_restart()
    worker.step()
    time.sleep(0.1)
    assert browser.restarts == 0


def test_periodic_duties_run_at_boot_and_then_every_interval(workers):
    calls: list[datetime] = []
    duty = Periodic("count", timedelta(hours=1), lambda: calls.append(timezone.now()))
    worker = workers(lambda payload, ctx: None, periodic=[duty])
    worker.step()
    worker.step()
    assert len(calls) == 1
