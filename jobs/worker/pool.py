"""A bounded pool of long-lived job threads, each keeping its own database connection.

A thread per job paid for a thread start and, worse, a new PostgreSQL
connection per job (Django connections are per thread, and a short-lived
thread has to close its own). Here `size` threads run jobs one after another
and keep their connection between jobs: it is closed only when a job left it
broken (an error Django saw, or a transaction left open) or it is older than
`JOBS_CONN_MAX_AGE_SECS`, and always when the thread exits, so a stopped
pool holds no connection.

The loop never hands the pool more tasks than it has free threads (`free`),
so a task never waits behind another for a thread; a handler that ignores
its cancel event keeps its thread busy, exactly as it keeps its slot.
"""

from __future__ import annotations

import logging
import queue as stdlib_queue
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper

logger = logging.getLogger(__name__)

Task = Callable[[], Any]


def connection_should_close(age_secs: float, max_age_secs: float, broken: bool) -> bool:
    """Whether a job thread drops its connection before the next job: broken, or `max_age_secs` old."""
    return broken or age_secs >= max_age_secs


class ConnectionKeeper:
    """Tidies the calling thread's Django connection between jobs (one keeper per thread)."""

    def __init__(self, max_age_secs: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_secs = max_age_secs
        self.clock = clock
        self._raw: Any = None
        self._seen_at = 0.0
        self._db: BaseDatabaseWrapper | None = None
        self._db_thread: int | None = None

    def _thread_db(self) -> BaseDatabaseWrapper:
        # The calling thread's connection wrapper, looked up once per thread:
        # each `django.db.connection` attribute is a thread-local lookup of its
        # own, and this runs after every job.
        thread = threading.get_ident()
        if self._db is None or self._db_thread != thread:
            self._db, self._db_thread = connections[DEFAULT_DB_ALIAS], thread
        return self._db

    def tidy(self) -> None:
        db = self._thread_db()
        raw = db.connection
        if raw is None:
            self._raw = None
            return
        now = self.clock()
        if raw is not self._raw:  # opened during the last job: its age counts from now
            self._raw, self._seen_at = raw, now
        if connection_should_close(now - self._seen_at, self.max_age_secs, self._broken(db)):
            db.close()
            self._raw = None

    @staticmethod
    def _broken(db: BaseDatabaseWrapper) -> bool:
        # A handler that left a transaction open would run the next job inside
        # it; an error Django recorded may have killed the session. Only then
        # does the check cost a round trip (`is_usable`).
        if db.in_atomic_block or not db.get_autocommit():
            return True
        return bool(db.errors_occurred) and not db.is_usable()


class JobPool:
    """`size` job threads started on first use; `stop` ends them, each closing its connection."""

    def __init__(
        self, size: int, *, conn_max_age_secs: float, name: str = "job", outages: Callable[[], int] = lambda: 0
    ) -> None:
        self.size = size
        self.conn_max_age_secs = conn_max_age_secs
        self.name = name
        # How many database outages the worker has seen: a thread whose connection predates the last one
        # drops it before its next task instead of failing that task on a dead socket.
        self.outages = outages
        self._tasks: stdlib_queue.SimpleQueue[Task | None] = stdlib_queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._busy = 0  # tasks submitted whose thread has not come back for another

    def free(self) -> int:
        """How many more tasks may be submitted now: threads neither running a task nor about to."""
        return self.size - self._busy

    def submit(self, task: Task) -> None:
        """Run `task` on a pool thread. The caller submits only while `free()` is positive."""
        if len(self._threads) < self.size:
            self._start()
        with self._lock:
            self._busy += 1
        self._tasks.put(task)

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        keeper = ConnectionKeeper(self.conn_max_age_secs)
        outages_seen = self.outages()
        try:
            while (task := self._tasks.get()) is not None:
                if (outages := self.outages()) != outages_seen:
                    outages_seen = outages
                    connection.close()
                try:
                    task()
                except BaseException:  # tasks report their own outcome; this only keeps the thread alive
                    logger.exception("job thread: task raised")
                keeper.tidy()
                with self._lock:
                    self._busy -= 1
        finally:
            connection.close()

    def stop(self, timeout: float) -> list[threading.Thread]:
        """Let every thread finish its task and exit; returns those still busy after `timeout`."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._tasks.put(None)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return [thread for thread in threads if thread.is_alive()]
