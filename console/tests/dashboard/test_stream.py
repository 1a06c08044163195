"""The SSE status stream: access, events on worker changes, keep-alives, revocation, shared fan-out."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest
from asgiref.testing import ApplicationCommunicator
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token

from console.dashboard.broadcaster import StatusBroadcaster, TtlMemo, default_compose, get_broadcaster
from console.dashboard.stream import KEEP_ALIVE
from jobs.models import WorkerStatus
from testsupport.live_server import LiveServer

STREAM = "/api/v1/admin/crawler/stream/"


class SseReader:
    """Reads an SSE response into ("event", data) and ("comment", text) items."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def __iter__(self) -> Iterator[tuple[str, str]]:
        event: dict[str, str] = {}
        for line in self._lines:
            if line.startswith(":"):
                yield "comment", line[1:].strip()
            elif line == "":
                if "data" in event:
                    yield event.get("event", "message"), event["data"]
                event = {}
            else:
                key, _, value = line.partition(": ")
                event[key] = value

    def next_status(self, predicate=lambda status: True) -> dict:
        for kind, data in self:
            if kind == "status":
                status = json.loads(data)
                if predicate(status):
                    return status
        raise AssertionError("stream ended before the expected status arrived")


def _stream(server: LiveServer, session_key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, cookies={"sessionid": session_key}, timeout=httpx.Timeout(20.0))


# --- access ---------------------------------------------------------------------------


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_stream_refuses_anonymous_with_401_and_non_staff_with_403(client, alice):
    anonymous = client.get(STREAM)
    assert anonymous.status_code == 401
    assert anonymous["Cache-Control"] == "no-store"
    client.force_login(alice)
    reader = client.get(STREAM)
    assert reader.status_code == 403
    assert reader["Cache-Control"] == "no-store"


# --- live server ------------------------------------------------------------------------


@pytest.mark.process
def test_stream_pushes_the_status_a_worker_process_publishes(daphne_server, staff_session, status_worker):
    with _stream(daphne_server, staff_session) as http, http.stream("GET", STREAM) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-store"
        events = SseReader(response)
        first = events.next_status()
        assert {"phase", "workers", "queue", "active_chapters", "last_pass"} <= first.keys()

        status_worker.send("phase", phase={"state": "fetching_metadata", "index": 3, "total": 9, "title": "Berserk"})
        status = events.next_status(lambda s: s["phase"]["state"] == "fetching_metadata")
        assert status["phase"] == {"state": "fetching_metadata", "index": 3, "total": 9, "title": "Berserk"}

        status_worker.send("chapter", manga_id="m1", manga_title="Berserk", chapter_id="c1", chapter_number=12)
        status_worker.send("pages", chapter_id="c1", done=4, total=20)
        status = events.next_status(lambda s: any(c["pages_done"] == 4 for c in s["active_chapters"]))
        assert status["active_chapters"][0]["pages_total"] == 20


@pytest.mark.process
def test_stream_accepts_a_staff_api_token_and_refuses_other_tokens(daphne_server, staff, alice):
    staff_token, alice_token = Token.objects.create(user=staff), Token.objects.create(user=alice)

    def get(token: str) -> int:
        headers = {"Authorization": f"Token {token}"}
        with (
            httpx.Client(base_url=daphne_server.url, timeout=20) as http,
            http.stream("GET", STREAM, headers=headers) as r,
        ):
            if r.status_code == 200:
                assert next(iter(SseReader(r)))[0] == "status"
            return r.status_code

    assert get(staff_token.key) == 200
    assert get(alice_token.key) == 403
    assert get("not-a-token") == 401


@pytest.mark.process
def test_stream_sends_keep_alive_comments_while_nothing_changes(daphne_server, staff_session):
    with _stream(daphne_server, staff_session) as http, http.stream("GET", STREAM) as response:
        items = iter(SseReader(response))
        assert next(items)[0] == "status"
        # Nothing publishes: the next two items are keep-alives, not repeated statuses.
        assert [next(items), next(items)] == [("comment", KEEP_ALIVE.strip(": \n"))] * 2


@pytest.mark.process
def test_stream_ends_when_its_session_is_deleted_and_reconnecting_gets_401(daphne_server, staff_session):
    with _stream(daphne_server, staff_session) as http:
        with http.stream("GET", STREAM) as response:
            items = iter(SseReader(response))
            assert next(items)[0] == "status"
            Session.objects.filter(session_key=staff_session).delete()
            # The stream finishes on its own (iteration ends) within a keep-alive interval.
            assert all(kind in ("status", "comment") for kind, _ in items)
        assert http.get(STREAM).status_code == 401


def _database_ports_of(pid: int) -> set[int]:
    """The local ports of `pid`'s TCP connections to PostgreSQL: its database sessions, whoever else is connected."""
    db_port = int(connection.settings_dict["PORT"] or 5432)
    return {
        conn.laddr.port
        for conn in psutil.Process(pid).net_connections(kind="tcp")
        if conn.raddr and conn.raddr.port == db_port
    }


def _sessions_on_ports(ports: set[int]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, client_port, state, query FROM pg_stat_activity WHERE client_port = ANY(%s)",
            [sorted(ports)],
        )
        return cursor.fetchall()


@pytest.mark.process
def test_open_streams_do_not_each_hold_a_database_connection(daphne_server, staff_session):
    """Eight tabs, one broadcaster: the server's connections are its composer and listener, not one per tab."""
    readers = []  # keep every reader alive: a collected one closes its response
    with _stream(daphne_server, staff_session) as http, contextlib.ExitStack() as streams:
        for _ in range(8):
            readers.append(iter(SseReader(streams.enter_context(http.stream("GET", STREAM)))))
            assert next(readers[-1])[0] == "status"
        # Counted on the server process itself: connections other tests' processes
        # or threads still hold on this database are not the server's.
        server_ports = _database_ports_of(daphne_server.process.pid)
        sessions = _sessions_on_ports(server_ports)
    assert 1 <= len(server_ports) <= 2, sessions


# --- the broadcaster: shared work, cleanup ---------------------------------------------------


@pytest.mark.sqlite_ok
def test_ttl_memo_reuses_the_value_until_the_ttl_has_passed():
    calls = []
    clock = [100.0]
    memo = TtlMemo(lambda: calls.append(clock[0]) or len(calls), ttl=1.0, clock=lambda: clock[0])
    assert memo() == 1
    clock[0] = 100.9
    assert memo() == 1
    clock[0] = 101.0
    assert memo() == 2
    clock[0] = 101.5
    assert memo() == 2
    assert calls == [100.0, 101.0]


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_stream_compose_reuses_queue_counts_within_a_second_and_refreshes_after():
    clock = [0.0]
    compose = default_compose(clock=lambda: clock[0])

    def job_queries() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            compose()
        return [q["sql"] for q in captured.captured_queries if "crawler_jobs" in q["sql"]]

    assert len(job_queries()) == 1
    clock[0] = 0.99
    assert job_queries() == []
    clock[0] = 1.0
    assert len(job_queries()) == 1


async def _subscribe_many(broadcaster: StatusBroadcaster, n: int, until: str) -> list[str]:
    """Open `n` subscriptions and return what each saw once its data contains `until`."""

    async def one() -> str:
        sub = broadcaster.subscribe()
        seen = 0
        try:
            while True:
                snapshot = await sub.next(seen, timeout=10)
                assert snapshot is not None, "no status within the timeout"
                seen = snapshot.version
                if until in snapshot.data:
                    return snapshot.data
        finally:
            sub.close()

    return await asyncio.gather(*(one() for _ in range(n)))


@pytest.mark.sqlite_ok
def test_a_burst_of_signals_is_composed_once_and_every_subscriber_gets_the_same_payload():
    state = {"value": "initial"}

    def compose() -> dict:
        return {"value": state["value"]}

    broadcaster = StatusBroadcaster(compose, listen="manual", refresh=60, auth_interval=60)

    async def scenario() -> list[str]:
        waiting = asyncio.ensure_future(_subscribe_many(broadcaster, 50, "final"))
        while broadcaster.latest is None:
            await asyncio.sleep(0.01)
        composes_before = broadcaster.stats.composes
        state["value"] = "final"
        for _ in range(100):
            broadcaster.poke()
        payloads = await waiting
        # 100 signals within one debounce window: one compose, not one per signal or subscriber.
        assert broadcaster.stats.composes - composes_before == 1
        return payloads

    payloads = asyncio.run(scenario())
    assert payloads == ['{"value":"final"}'] * 50
    assert broadcaster.join_stopped()
    assert not broadcaster.running


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_without_notify_a_changed_worker_row_is_picked_up_by_polling():
    """The SQLite path: no NOTIFY, so the broadcaster polls the worker table and recomposes when it moves."""
    row = WorkerStatus.objects.create(role="crawl", host="h", pid=1, heartbeat_at=timezone.now())

    def compose() -> dict:
        return {"phases": [w.phase.get("state") for w in WorkerStatus.objects.all()]}

    broadcaster = StatusBroadcaster(compose, listen="poll", poll_interval=0.05, refresh=60, auth_interval=60)

    async def scenario() -> list[str]:
        waiting = asyncio.ensure_future(_subscribe_many(broadcaster, 3, "walking_list"))
        while broadcaster.latest is None:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(
            lambda: WorkerStatus.objects.filter(id=row.id).update(
                phase={"state": "walking_list"}, heartbeat_at=timezone.now()
            )
        )
        return await waiting

    assert asyncio.run(scenario()) == ['{"phases":["walking_list"]}'] * 3
    assert broadcaster.stats.signals >= 1
    assert broadcaster.join_stopped()


@pytest.fixture
def redis_url(tmp_path) -> Iterator[str]:
    """A private redis-server on a unix socket (no TCP port at all)."""
    sock = tmp_path / "redis.sock"
    process = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"unix://{sock}"
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.process
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_with_redis_a_worker_process_signal_arrives_over_the_channel_layer(
    redis_url, settings, child_env, status_worker_factory
):
    settings.REDIS_URL = redis_url
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [redis_url]}}
    }
    composes = []

    def compose() -> dict:
        composes.append(1)
        return {"compose": len(composes)}

    broadcaster = StatusBroadcaster(compose, listen="channels", refresh=60, auth_interval=60)
    worker = status_worker_factory(dict(child_env, REDIS_URL=redis_url))

    async def scenario() -> None:
        sub = broadcaster.subscribe()
        try:
            first = await sub.next(0, timeout=10)
            assert first is not None
            # Give the listener a moment to join the group before the worker speaks.
            for attempt in range(30):
                await asyncio.to_thread(worker.send, "phase", phase={"state": "walking_list", "attempt": attempt})
                await asyncio.sleep(0.3)
                if broadcaster.stats.signals:
                    break
            assert broadcaster.stats.signals, "no signal came over the channel layer"
            assert await sub.next(first.version, timeout=10) is not None
        finally:
            sub.close()

    asyncio.run(scenario())
    assert broadcaster.join_stopped()


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_database_queries_per_compose_do_not_grow_with_subscribers(status_worker):
    """The real compose behind 1 and then 40 subscribers: the same queries per compose, counts memoised."""
    per_compose, composes = [], []
    for subscribers in (1, 40):
        broadcaster = StatusBroadcaster(listen="postgres", refresh=60, auth_interval=60)

        async def scenario(broadcaster: StatusBroadcaster = broadcaster, n: int = subscribers) -> None:
            waiting = asyncio.ensure_future(_subscribe_many(broadcaster, n, f"title-{n}"))
            while broadcaster.latest is None:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(
                status_worker.send,
                "phase",
                phase={"state": "fetching_metadata", "index": 1, "total": 2, "title": f"title-{n}"},
            )
            await waiting

        asyncio.run(scenario())
        assert broadcaster.join_stopped()
        stats = broadcaster.stats
        assert stats.composes >= 2
        per_compose.append(stats.queries / stats.composes)
        composes.append(stats.composes)
    # One compose per signal window whatever the audience (a handful of
    # windows here: start, listener connect, the worker's writes).
    assert composes[1] <= composes[0] + 2
    # The queue-count GROUP BY is memoised for a second, so a compose within
    # that second costs fewer queries; never more with more subscribers.
    assert per_compose[1] <= per_compose[0]


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_client_disconnect_closes_the_generator_and_stops_the_broadcaster(staff_session):
    from mangalord.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": STREAM,
        "raw_path": STREAM.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"cookie", f"sessionid={staff_session}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    broadcaster = get_broadcaster()

    async def scenario() -> None:
        comm = ApplicationCommunicator(application, scope)
        await comm.send_input({"type": "http.request", "body": b"", "more_body": False})
        start = await comm.receive_output(10)
        assert start["status"] == 200
        body = b""
        while b"event: status" not in body:
            body += (await comm.receive_output(10))["body"]
        assert broadcaster.subscriber_count == 1
        await comm.send_input({"type": "http.disconnect"})
        await comm.wait(10)

    asyncio.run(scenario())
    assert broadcaster.subscriber_count == 0
    assert not broadcaster.running
    assert broadcaster.join_stopped()
