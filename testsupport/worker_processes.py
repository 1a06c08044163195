"""Helpers for tests that run real `manage.py crawl_worker` processes against the live demo site."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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
    "JOBS_LEASE_SECS": "3",
    "JOBS_HEARTBEAT_SECS": "1",
    "JOBS_POLL_SECS": "0.2",
    "JOBS_WORKERS": "1",
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

    def __init__(self, env: dict[str, str], manage_cmd: list[str], log_dir: Path, *, schedule: bool = False) -> None:
        self.env = env
        self.manage_cmd = manage_cmd
        self.log_dir = log_dir
        self.schedule = schedule
        self.started: list[WorkerProcess] = []

    def start(self, *args: str, command: str = "crawl_worker", **env: str) -> WorkerProcess:
        """Start `manage.py <command> *args`; crawl workers schedule their own metadata pass only if `schedule`."""
        if command == "crawl_worker" and not self.schedule:
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


RACE_CHILD = os.path.join(os.path.dirname(__file__), "queue_race_child.py")


class RaceChild:
    """One `queue_race_child.py` process driven over its line protocol."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, RACE_CHILD, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"child exited early with {self.proc.wait(timeout=10)}"
        return line.strip()

    def expect(self, line: str) -> None:
        assert self.read() == line

    def ask(self, line: str) -> dict:
        self.send(line)
        return json.loads(self.read())


def race_children(env: dict[str, str]) -> Iterator[Callable[..., RaceChild]]:
    """Body of a `spawn` fixture: start(*args) starts a child with `env`; leftovers are killed at teardown.

    Call `expect("ready")` on a child before driving it (lets several boot in parallel).
    """
    children: list[RaceChild] = []

    def start(*args: str) -> RaceChild:
        child = RaceChild(list(args), env)
        children.append(child)
        return child

    yield start
    for child in children:
        if child.proc.poll() is None:
            child.proc.kill()
        child.proc.wait(timeout=10)


def demo_downloads_queued(demo_site_factory: Any) -> Any:
    """A demo manga of two 3-page chapters, its metadata pass run here: the two page-download jobs it queued."""
    from catalog.models import Source
    from crawler.passes.metadata_pass import run_metadata_pass
    from jobs.models import Job
    from jobs.worker.status.handle import StatusHandle

    site = demo_site_factory(mangas=1, chapters=(2, 2), pages=(3, 3))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    content = Job.objects.filter(kind="sync_chapter_content")
    assert content.count() == 2
    return content


def storage_paused_flag(pid: int) -> str | None:
    """Why the worker `pid` says page downloads are paused (its published `storage_paused` flag), or None."""
    from jobs.models import WorkerStatus

    return (
        WorkerStatus.objects.filter(pid=pid, flags__storage_paused__isnull=False)
        .values_list("flags__storage_paused", flat=True)
        .first()
    )
