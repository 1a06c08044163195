"""Helpers for tests that run real `manage.py crawl_worker` processes against the live demo site."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from conftest import REPO_ROOT

# Short leases so a killed worker's lease expires within a test's patience; a
# quick poll so idle workers notice a refreshed session or a new job fast.
FAST_ENV = {
    "CRAWLER_LEASE_SECS": "3",
    "CRAWLER_HEARTBEAT_SECS": "1",
    "CRAWLER_POLL_SECS": "0.2",
    "CRAWLER_WORKERS": "1",
    "ANALYSIS_ENABLED": "false",
    "LOG_LEVEL": "INFO",
}


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class WorkerProcess:
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill9(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and the exit code (the worker should exit within seconds)."""
        self.wait_ready()
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until the worker has booted (signal handlers installed): a SIGTERM before that is Python's default."""
        wait_until(lambda: "worker ready" in self.log(), timeout, what=f"worker {self.pid} to boot")

    def wait(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout)

    @property
    def pid(self) -> int:
        return self.process.pid


class WorkerProcesses:
    """Starts worker processes; whatever is still running at teardown is killed."""

    def __init__(self, env: dict[str, str], manage_cmd: list[str], log_dir: Path) -> None:
        self.env = env
        self.manage_cmd = manage_cmd
        self.log_dir = log_dir
        self.started: list[WorkerProcess] = []

    def start(self, *args: str, command: str = "crawl_worker", **env: str) -> WorkerProcess:
        """Start `manage.py <command> *args`; crawl workers never schedule their own metadata pass here."""
        if command == "crawl_worker":
            args = ("--no-schedule", *args)
        log_path = self.log_dir / f"{command}-{len(self.started)}.log"
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [*self.manage_cmd, command, *args],
                env={**self.env, **env},
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        worker = WorkerProcess(process, log_path)
        self.started.append(worker)
        return worker

    def cleanup(self) -> None:
        for worker in self.started:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait(10)

    def logs(self) -> str:
        return "\n".join(f"--- {w.log_path.name} (pid {w.pid}) ---\n{w.log()}" for w in self.started)


def worker_pool(child_env: dict[str, str], manage_cmd: list[str], tmp_path: Path) -> Iterator[WorkerProcesses]:
    """Body of a test module's `workers` fixture: fast settings, leftovers killed, logs shown on failure."""
    env = {**child_env, **FAST_ENV}
    processes = WorkerProcesses(env, manage_cmd, tmp_path)
    try:
        yield processes
    finally:
        processes.cleanup()
        print(processes.logs())  # shown by pytest only when the test failed


def stored_files(chapter_id: Any) -> set[str]:
    """Every file in a chapter's page directory, as storage names."""
    directory = Path(settings.MEDIA_ROOT) / "pages" / str(chapter_id)
    if not directory.exists():
        return set()
    return {f"pages/{chapter_id}/{name}" for name in os.listdir(directory)}
