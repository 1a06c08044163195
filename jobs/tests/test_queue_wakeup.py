"""Wake-up of idle workers: NOTIFY from `enqueue` on PostgreSQL, an interruptible poll on SQLite."""

import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection

from analysis.payloads import AnalyzePage
from crawler.payloads import SyncManga
from jobs import queue, requeue, retry, wakeup

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY needs PostgreSQL")
on_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="the polling fallback is SQLite's mode")


class Producer(threading.Thread):
    """Enqueues `make()` on its own connection after `go` is set, every 50 ms until stopped."""

    def __init__(self, make) -> None:
        super().__init__(daemon=True)
        self.make = make
        self.go = threading.Event()
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            self.go.wait(30)
            while not self.stop.is_set():
                queue.enqueue(self.make())
                self.stop.wait(0.05)
        finally:
            connection.close()

    def __enter__(self) -> "Producer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.go.set()
        self.join(timeout=30)


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_enqueue_notify_wakes_a_waiting_listener():
    with wakeup.JobListener(["analyze_page"]) as listener, Producer(lambda: AnalyzePage(page_id=uuid.uuid4())) as p:
        p.go.set()
        assert listener.wait(timeout=30) is True


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_listener_catches_a_job_enqueued_before_it_started_waiting():
    # Open before the empty lease, as a worker does: a job enqueued between
    # the lease and the wait must still wake it.
    with wakeup.JobListener(None) as listener:
        queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
        assert listener.wait(timeout=30) is True


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_listener_ignores_kinds_it_does_not_lease():
    with wakeup.JobListener(["analyze_page"]) as listener:
        queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title=""))
        assert listener.wait(timeout=0.5) is False


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_skipped_enqueue_does_not_notify():
    page = AnalyzePage(page_id=uuid.uuid4())
    queue.enqueue(page)
    with wakeup.JobListener(None) as listener:
        assert queue.enqueue(page).skipped
        assert listener.wait(timeout=0.5) is False


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_stop_event_ends_a_listener_wait():
    stop = threading.Event()
    with wakeup.JobListener(["analyze_page"], stop=stop) as listener:
        stop.set()
        assert listener.wait(timeout=30) is False


@on_sqlite
@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_sqlite_fallback_waits_the_timeout_without_a_listener():
    with wakeup.JobListener(["analyze_page"]) as listener:
        queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
        started = time.monotonic()
        assert listener.wait(timeout=0.2) is False
        assert time.monotonic() - started >= 0.2


@on_sqlite
@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_sqlite_fallback_wait_is_interrupted_by_stop():
    stop = threading.Event()
    stop.set()
    with wakeup.JobListener(None, stop=stop) as listener:
        assert listener.wait(timeout=600) is False


def _dead_job(kind_payload) -> queue.Lease:
    queue.enqueue(kind_payload, max_attempts=1)
    [lease] = queue.lease(None, 1, timedelta(seconds=30))
    retry.ack_failed(lease, "boom")
    return lease


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_requeue_of_dead_jobs_wakes_idle_workers_of_their_kind():
    _dead_job(AnalyzePage(page_id=uuid.uuid4()))
    with wakeup.JobListener(["analyze_page"]) as listener:
        assert listener.wait(timeout=0.3) is False
        assert requeue.requeue_dead("all", confirm=True) == 1
        assert listener.wait(timeout=30) is True


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_release_unowned_wakes_idle_workers_so_the_refreshed_job_runs_at_once():
    queue.enqueue(SyncManga(source_id="demo", source_manga_key="k", url="", title=""))
    [lease] = queue.lease(None, 1, timedelta(seconds=30))
    with wakeup.JobListener(["sync_manga"]) as listener:
        assert listener.wait(timeout=0.3) is False
        assert retry.release_unowned(lease.id) is True
        assert listener.wait(timeout=30) is True
