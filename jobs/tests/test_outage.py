"""The outage rules of the worker loop: what counts as a lost connection, the backoff, the retry helper, and a
real step surviving `pg_terminate_backend` on its own session."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import IntegrityError, connection
from django.db.utils import InterfaceError as DjangoInterfaceError
from django.db.utils import OperationalError as DjangoOperationalError
from psycopg import errors as pg_errors

from analysis.payloads import AnalyzePage
from console.status.compose import compose_status
from jobs import queue
from jobs.models import Job, JobState, WorkerStatus
from jobs.worker.loop import Worker, WorkerConfig
from jobs.worker.outage import DatabaseOutage, DatabaseUnavailable, is_connection_lost, retry_delay
from jobs.worker.outcomes import Disposition, disposition


def _wrapped(cause: BaseException) -> DjangoOperationalError:
    """As Django raises it: its own OperationalError with the driver's error as the cause."""
    try:
        raise DjangoOperationalError(str(cause)) from cause
    except DjangoOperationalError as exc:
        return exc


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (pg_errors.AdminShutdown("terminating connection due to administrator command"), True),  # 57P01
        (pg_errors.CannotConnectNow("the database system is starting up"), True),  # 57P03
        (pg_errors.TooManyConnections("too many clients"), True),  # 53300
        (pg_errors.ConnectionFailure("server conn crashed?"), True),  # 08006
        (psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"), True),
        (
            psycopg.OperationalError(
                'connection failed: connection to server at "127.0.0.1" failed: Connection refused'
            ),
            True,
        ),
        (psycopg.InterfaceError("the connection is closed"), True),
        (DjangoInterfaceError("connection already closed"), True),
        (_wrapped(psycopg.OperationalError("server closed the connection unexpectedly")), True),
        (psycopg.OperationalError('connection failed: FATAL:  database "nope" does not exist'), False),
        (psycopg.OperationalError("connection failed: FATAL:  password authentication failed for user"), False),
        (pg_errors.SerializationFailure("could not serialize access"), False),  # 40001: a retry, not an outage
        (pg_errors.QueryCanceled("canceling statement due to statement timeout"), False),  # 57014
        (_wrapped(pg_errors.UndefinedTable('relation "x" does not exist')), False),
        (DjangoOperationalError("database is locked"), False),  # SQLite
        (IntegrityError("duplicate key"), False),
        (ValueError("not a database error"), False),
    ],
)
def test_is_connection_lost_truth_table(error, lost):
    assert is_connection_lost(error) is lost


@pytest.mark.parametrize(
    ("attempt", "jitter", "secs"),
    [(1, 1.0, 0.25), (2, 1.0, 0.5), (3, 1.0, 1.0), (5, 1.0, 4.0), (6, 1.0, 5.0), (100, 1.0, 5.0), (3, 0.5, 0.5)],
)
def test_retry_delay_doubles_to_a_cap_with_jitter(attempt, jitter, secs):
    assert retry_delay(attempt, base=0.25, cap=5.0, jitter=jitter) == pytest.approx(secs)


class Flaky:
    """Fails with a lost connection `failures` times, then answers."""

    def __init__(self, failures: int, error: BaseException | None = None) -> None:
        self.failures = failures
        self.calls = 0
        self.error = error or pg_errors.AdminShutdown("terminating connection due to administrator command")

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise _wrapped(self.error)
        return "ok"


def _outage(stop: threading.Event, reports: list) -> DatabaseOutage:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ticks = iter(start + timedelta(seconds=n) for n in range(100))
    return DatabaseOutage(stop, report=reports.append, base_secs=0.0, clock=lambda: next(ticks))


def test_a_lost_connection_is_retried_until_the_step_succeeds_and_reported_since_when():
    reports: list = []
    step = Flaky(3)
    outage = _outage(threading.Event(), reports)
    assert outage.call("lease", step) == "ok"
    assert step.calls == 4
    assert reports == ["2026-01-01T00:00:00+00:00", None]  # set at the first loss, cleared at the first success
    assert not outage.unavailable and outage.outages == 1


def test_an_error_that_is_not_an_outage_is_raised_at_once():
    step = Flaky(1, pg_errors.UndefinedTable('relation "x" does not exist'))
    with pytest.raises(DjangoOperationalError):
        _outage(threading.Event(), []).call("lease", step)
    assert step.calls == 1


def test_a_stopping_worker_tries_one_fresh_connection_and_gives_up():
    stop = threading.Event()
    stop.set()
    step = Flaky(5)
    with pytest.raises(DatabaseUnavailable):
        _outage(stop, []).call("release", step)
    assert step.calls == 2
    assert _outage(stop, []).call("release", Flaky(1)) == "ok"  # a connection that died while idle


@pytest.mark.django_db
def test_compose_lists_workers_whose_database_is_unavailable():
    WorkerStatus.objects.create(
        role="crawl",
        host="h",
        pid=7,
        kinds=[],
        heartbeat_at=datetime.now(UTC),
        flags={"database_unavailable_since": "2026-01-01T00:00:00+00:00"},
    )
    status = compose_status(counts={})
    assert status["database_unavailable"] == [{"worker": "h:7", "since": "2026-01-01T00:00:00+00:00", "state": "live"}]


def test_a_job_cut_off_by_the_outage_is_released_not_failed():
    assert disposition(_wrapped(psycopg.OperationalError("server closed the connection unexpectedly"))) is (
        Disposition.RELEASE
    )
    assert disposition(_wrapped(pg_errors.UndefinedTable("x"))) is Disposition.RETRY


@pytest.mark.django_db(transaction=True)
def test_a_step_survives_its_session_being_terminated():
    if connection.vendor != "postgresql":
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    ran: list = []
    worker = Worker(WorkerConfig(role="analyze", handlers={"analyze_page": lambda payload, ctx: ran.append(payload)}))
    for _ in range(3):
        queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    worker.step()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(
        **{k: v for k, v in connection.get_connection_params().items() if k != "cursor_factory"}
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    try:
        for _ in range(20):
            worker.step()
            worker.wait_until_settled(1.0)
            if len(ran) == 3 and not Job.objects.exclude(state=JobState.DONE).exists():
                break
        assert len(ran) == 3
        assert set(Job.objects.values_list("state", flat=True)) == {JobState.DONE}
        assert worker.outage.outages == 1 and not worker.outage.unavailable  # lost once, then back
    finally:
        worker.shutdown(grace_secs=2)


def test_the_status_stream_says_since_when_the_database_is_unavailable():
    """When the web process cannot compose (the database is gone), subscribers hear so instead of silence."""
    import asyncio

    from console.dashboard.broadcaster import StatusBroadcaster

    state = {"down": True}

    def compose() -> dict:
        if state["down"]:
            raise DjangoOperationalError("connection failed: server closed the connection unexpectedly")
        return {"phase": "back"}

    broadcaster = StatusBroadcaster(compose, listen="manual", refresh=60, auth_interval=60)

    async def scenario() -> list[str]:
        sub = broadcaster.subscribe()
        try:
            first = await sub.next(0, timeout=10)
            assert first is not None
            state["down"] = False
            broadcaster.poke()
            second = await sub.next(first.version, timeout=10)
            assert second is not None
            return [first.data, second.data]
        finally:
            sub.close()

    down, back = asyncio.run(scenario())
    assert '"database_unavailable_since":' in down
    assert "back" in back and "database_unavailable_since" not in back
