"""The web process: Granian serving `mangalord.asgi:application` with one worker process per core.

Granian (Rust HTTP, one Python interpreter per worker) answers several times
as many requests as one Daphne process on the same cores: Daphne's Twisted
loop alone tops out near 280 static responses a second here. uvicorn with
uvloop and httptools was measured too (bench/serve.py, docs/serving.md) and
came between the two. The app is plain HTTP: pages, the API, and the
dashboard's Server-Sent Events stream (a long streaming response), so
websockets are off; Django has no ASGI lifespan handler, so the interface is
`asginl` (no lifespan). Each worker runs Granian's single-threaded runtime:
with one worker a core, more Rust threads only contend for the same core.
The access log stays off: it would print API keys
that readers put in catalog URLs (`mangalord.log_masking` masks Daphne's).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from typing import IO

from mangalord.database_config import WEB_PROCESS_ENV

APPLICATION = "mangalord.asgi:application"


def default_workers() -> int:
    """One worker process a core: each is one interpreter lock."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def granian_argv(addr: str, port: int, workers: int, *, log_level: str = "warning") -> list[str]:
    """The command line of the web process. Pure."""
    return [
        sys.executable, "-m", "granian",
        "--interface", "asginl",
        "--no-ws",
        "--host", addr,
        "--port", str(port),
        "--workers", str(workers),
        "--runtime-mode", "st",
        "--log-level", log_level,
        "--no-access-log",
        APPLICATION,
    ]  # fmt: skip


def web_process_env(base: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: `base`, marked as the web process, whose database connections are pooled
    (mangalord/database_config.py). Pure."""
    return {**base, WEB_PROCESS_ENV: "1"}


def run(addr: str, port: int, workers: int, *, output: IO[str] | None = None, log_level: str = "warning") -> int:
    """Serve until the server exits or this process gets SIGINT/SIGTERM (passed on); the server's exit status.

    The server's own lines go to `output` when given (the demo keeps its console for its progress bars)."""
    process = subprocess.Popen(
        granian_argv(addr, port, workers, log_level=log_level),
        env=web_process_env(os.environ),
        stdout=output,
        stderr=output,
    )
    previous = {sig: signal.signal(sig, lambda signum, frame: process.send_signal(signum)) for sig in _STOPS}
    try:
        return process.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.poll() is None:
            process.terminate()
            process.wait(10)


_STOPS = (signal.SIGINT, signal.SIGTERM)
