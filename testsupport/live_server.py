"""Real web servers in a subprocess on 127.0.0.1: Daphne (ephemeral port) and the production web process.

Used by the dashboard and stream tests and by `bench/status_fanout.py`. The
caller passes the child environment (database, media) so the server sees the
same data as the test.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from testsupport.ports import free_port, wait_for_port

LISTENING = re.compile(r"Listening on TCP address 127\.0\.0\.1:(\d+)")
APPLICATION = "mangalord.asgi:application"


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen
    log_path: str

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)


def start_daphne(env: dict[str, str], *, cwd: str, startup_timeout: float = 30.0) -> LiveServer:
    """Start Daphne and return once it listens; the port comes from its own log line."""
    # An escape hatch some test processes need (Playwright's loop) must not
    # hide real async-safety bugs in the server.
    env = {k: v for k, v in env.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    fd, log_path = tempfile.mkstemp(prefix="daphne-", suffix=".log")
    log = os.fdopen(fd, "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", "0", APPLICATION],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    server = LiveServer(url="", process=process, log_path=log_path)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        match = LISTENING.search(server.log())
        if match:
            server.url = f"http://127.0.0.1:{match.group(1)}"
            return server
        if process.poll() is not None:
            break
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"daphne did not start:\n{server.log()}")


def start_web_process(env: dict[str, str], *, cwd: str, workers: int = 2, startup_timeout: float = 60.0) -> LiveServer:
    """Start the production web process (`manage.py serve`, Granian) on a free port; return once it accepts."""
    env = {k: v for k, v in env.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    fd, log_path = tempfile.mkstemp(prefix="web-", suffix=".log")
    log = os.fdopen(fd, "w")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", str(workers)],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    server = LiveServer(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    if wait_for_port(port, startup_timeout, alive=lambda: process.poll() is None):
        return server
    server.stop()
    raise RuntimeError(f"the web process did not start:\n{server.log()}")
