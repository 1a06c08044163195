"""The worker's job threads and its control cadence: pure decisions, then real connections."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from jobs.worker.cadence import control_due
from jobs.worker.pool import JobPool, connection_should_close
from testsupport.worker_processes import wait_until


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("last", "now", "stale", "due"),
    [(None, 5.0, False, True), (5.0, 5.5, False, False), (5.0, 6.0, False, True), (5.0, 5.1, True, True)],
)
def test_controls_are_reread_once_a_second_or_when_marked_stale(last, now, stale, due):
    assert control_due(last, now, every_secs=1.0, stale=stale) is due


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("age", "max_age", "broken", "close"),
    [(10.0, 600.0, False, False), (600.0, 600.0, False, True), (0.0, 600.0, True, True), (0.0, 0.0, False, True)],
)
def test_a_job_thread_keeps_its_connection_until_it_is_broken_or_old(age, max_age, broken, close):
    assert connection_should_close(age, max_age, broken) is close


def _backend_pid_on_pool(pool: JobPool) -> int:
    """Run one task on the pool that reports its thread's PostgreSQL backend."""
    seen: list[int] = []
    done = threading.Event()

    def task() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            seen.append(cursor.fetchone()[0])
        done.set()

    pool.submit(task)
    assert done.wait(10)
    return seen[0]


def _connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="counts PostgreSQL backends")
def test_job_threads_keep_one_connection_across_jobs_and_close_it_when_the_pool_stops():
    before = _connections()
    pool = JobPool(1, conn_max_age_secs=600)
    first, second = _backend_pid_on_pool(pool), _backend_pid_on_pool(pool)
    assert first == second  # no new connection per job
    assert pool.stop(timeout=10) == []
    # The stopped thread closed its connection (its backend exits a moment after the socket closes).
    wait_until(lambda: _connections() == before, timeout=5, what="the job thread's backend to go")


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="counts PostgreSQL backends")
def test_a_job_thread_reconnects_once_its_connection_is_past_the_max_age():
    pool = JobPool(1, conn_max_age_secs=0)
    try:
        assert _backend_pid_on_pool(pool) != _backend_pid_on_pool(pool)
    finally:
        pool.stop(timeout=10)
