"""Fixtures for the live-status tests: a real Daphne server and a real status-publishing worker process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from testsupport.live_server import LiveServer, start_daphne

REPO_ROOT = str(settings.BASE_DIR)
# Short keep-alives so revocation and idle behaviour show within a test's patience.
TEST_KEEPALIVE_SECS = "1"


@pytest.fixture
def daphne_server(transactional_db, child_env) -> Iterator[LiveServer]:
    """`daphne` serving the project (static files included) on 127.0.0.1:<ephemeral> against this test's DB."""
    env = dict(child_env, CRAWLER_STREAM_KEEPALIVE_SECS=TEST_KEEPALIVE_SECS)
    server = start_daphne(env, cwd=REPO_ROOT)
    try:
        yield server
    finally:
        server.stop()
        # Shown by pytest only when the test failed.
        print(f"--- daphne log ---\n{server.log()}")


@pytest.fixture
def staff_session(staff) -> str:
    """A real session row for the staff persona; its key is the `sessionid` cookie value."""
    client = Client()
    client.force_login(staff)
    return client.cookies["sessionid"].value


class StatusWorker:
    """Drives `testsupport.status_worker` (a separate OS process) one command at a time."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process

    def send(self, op: str, **fields: Any) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().strip()
        assert reply == "ok", f"worker replied {reply!r}"

    def quit(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.flush()
            self.process.wait(10)


@pytest.fixture
def status_worker_factory(transactional_db) -> Iterator[Callable[[dict[str, str]], StatusWorker]]:
    """Starts `testsupport.status_worker` processes with a given environment; all stopped at teardown."""
    processes: list[subprocess.Popen] = []

    def start(env: dict[str, str]) -> StatusWorker:
        process = subprocess.Popen(
            [sys.executable, "-m", "testsupport.status_worker"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        return StatusWorker(process)

    try:
        yield start
    finally:
        for process in processes:
            try:
                StatusWorker(process).quit()
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()


@pytest.fixture
def status_worker(status_worker_factory, child_env) -> StatusWorker:
    """A worker process publishing its status into this test's database."""
    return status_worker_factory(child_env)
