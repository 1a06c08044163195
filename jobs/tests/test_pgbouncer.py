"""Behind PgBouncer in transaction mode: NOTIFY goes through the pooler, LISTEN needs a direct session.

Child processes reach the database through a real PgBouncer (see
`testsupport.pgbouncer`); the queue's exactly-once and chaos tests run
through it too (`test_queue_processes.py`, `test_chaos.py`).
"""

import json
from collections.abc import Iterator

import pytest
from django.db import connection

from console.dashboard import listeners
from jobs.models import Job, JobState
from testsupport.worker_processes import race_children

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PgBouncer pools PostgreSQL"),
]


@pytest.fixture
def spawn(routed_child_env) -> Iterator:
    yield from race_children(routed_child_env)


@pytest.mark.process
@pytest.mark.parametrize("db_route", ["pgbouncer-listen"], indirect=True)
def test_a_direct_listener_hears_a_notify_sent_through_the_pooler(spawn):
    listener, producer = spawn("serve"), spawn("serve")
    listener.expect("ready")
    producer.expect("ready")

    listener.send("wait 30")
    assert json.loads(listener.read()) == {"listening": True}
    job = producer.ask("enqueue")
    woken = json.loads(listener.read())

    assert woken["woken"] is True
    assert woken["secs"] < 5  # a notification, not the 30 s timeout
    assert Job.objects.get(id=job["id"]).state == JobState.PENDING


@pytest.mark.process
@pytest.mark.parametrize("db_route", ["pgbouncer"], indirect=True)
def test_without_a_direct_url_workers_poll_and_still_lease_through_the_pooler(spawn):
    worker = spawn("serve")
    worker.expect("ready")

    worker.send("wait 0.5")
    assert json.loads(worker.read()) == {"listening": False}
    waited = json.loads(worker.read())
    assert waited["woken"] is False and waited["secs"] >= 0.5  # the poll interval, no LISTEN session

    job = worker.ask("enqueue")
    assert worker.ask("lease 60") == {"id": job["id"], "generation": 1}
    assert worker.ask("ack") == {"acked": True}
    assert Job.objects.get(id=job["id"]).state == JobState.DONE
    worker.send("quit")
    assert worker.proc.wait(timeout=30) == 0


@pytest.mark.parametrize(
    ("pooler", "direct", "redis", "expected"),
    [
        ("", "", "", "postgres"),
        ("pgbouncer", "postgres://postgres@127.0.0.1:5432/x", "", "postgres"),
        ("pgbouncer", "", "redis://127.0.0.1:6379/0", "channels"),
        ("pgbouncer", "", "", "poll"),
    ],
)
def test_the_status_stream_listens_only_where_a_session_exists(settings, pooler, direct, redis, expected):
    settings.DATABASE_POOLER, settings.DATABASE_DIRECT_URL, settings.REDIS_URL = pooler, direct, redis
    assert listeners.default_source() == expected
