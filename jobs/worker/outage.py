"""Riding out a lost database connection: tell an outage from an error, back off, retry, say since when.

A worker runs for months; PostgreSQL restarts, PgBouncer is redeployed, a
failover moves the primary, a network blip drops a socket. Each step of the
loop that talks to the database (lease, ack, renew, release, the status row,
LISTEN) goes through `DatabaseOutage.call`: when the connection is lost, the
thread's connection is closed (Django opens a new one on the next query) and
the step is retried after a capped, jittered backoff, while the process
stays up. Every step is safe to repeat: each queue write is guarded by the
lease generation, so a write that did commit before the connection died
steps aside the second time, and a lease claimed by a statement whose answer
was lost expires and is reclaimed like a killed worker's.

Only connection-level failures are retried (`is_connection_lost`): SQL
errors and configuration errors (no such database, a wrong password) are
not an outage and raise at once. While the worker is stopping, a step is
tried on one fresh connection at most and a lost connection then raises
`DatabaseUnavailable`, so shutdown
during an outage still exits within seconds; the leases it could not give
back expire and are reclaimed.

Outage state is shared by the worker's threads: the first loss sets the
status flag `database_unavailable_since` (the dashboard shows "database
unavailable since ..."), the first success after it clears the flag.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.utils import InterfaceError as DjangoInterfaceError
from django.utils import timezone

logger = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_BASE_SECS = 0.25
RETRY_MAX_SECS = 5.0
FLAG = "database_unavailable_since"

# SQLSTATEs of a session that died or could not start: class 08 (connection exception), the server shutting
# down or starting up (57P01 admin shutdown, as pg_terminate_backend sends; 57P02; 57P03), too many connections.
_LOST_SQLSTATES = {"57P01", "57P02", "57P03", "53300"}
# A connection failure carries no SQLSTATE; these phrases in it name a configuration error, not an outage.
_MISCONFIGURED = ("does not exist", "password authentication failed", "no pg_hba.conf entry", "authentication failed")


class DatabaseUnavailable(Exception):
    """The database could not be reached and the worker is stopping: the step was given up."""


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_connection_lost(exc: BaseException) -> bool:
    """True when `exc` says the database session died or could not be opened (an outage), not an SQL error."""
    import psycopg

    for error in _chain(exc):
        if isinstance(error, DjangoInterfaceError | psycopg.InterfaceError):
            return True  # "connection already closed"
        if isinstance(error, psycopg.OperationalError):
            sqlstate = getattr(error, "sqlstate", None)
            if sqlstate is None:
                return not any(phrase in str(error) for phrase in _MISCONFIGURED)
            return sqlstate.startswith("08") or sqlstate in _LOST_SQLSTATES
    return False


def retry_delay(attempt: int, *, base: float, cap: float, jitter: float) -> float:
    """Seconds before retry number `attempt` (1-based): doubling from `base`, capped, times `jitter` in [0.5, 1)."""
    return min(cap, base * 2 ** max(0, min(attempt, 30) - 1)) * jitter


class DatabaseOutage:
    """Retries database steps across a lost connection and tracks since when the database is unavailable.

    `stop` is the worker's stop event: while it is set a step is tried once.
    `report(value)` receives the ISO time the outage began, or None once it
    ended (the worker's status flag).
    """

    def __init__(
        self,
        stop: threading.Event,
        *,
        report: Callable[[str | None], None] = lambda _value: None,
        base_secs: float = RETRY_BASE_SECS,
        max_secs: float = RETRY_MAX_SECS,
        clock: Callable[[], datetime] = timezone.now,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.stop = stop
        self.report = report
        self.base_secs = base_secs
        self.max_secs = max_secs
        self.clock = clock
        self.rng = rng
        self.since: datetime | None = None
        self.outages = 0
        self._lock = threading.Lock()

    def call(self, step: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)`, retried while the connection is lost; raises `DatabaseUnavailable` once stopping."""
        attempt = 0
        while True:
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                if not is_connection_lost(exc):
                    raise
                attempt += 1
                self.lost(step, exc)
                if self.stop.is_set():
                    if attempt == 1:
                        continue  # a connection that died while idle: one fresh connection may do
                    raise DatabaseUnavailable(f"{step}: database unavailable while stopping") from exc
                delay = retry_delay(attempt, base=self.base_secs, cap=self.max_secs, jitter=0.5 + self.rng() / 2)
                if self.stop.wait(delay):
                    raise DatabaseUnavailable(f"{step}: database unavailable while stopping") from exc
                continue
            self.back()
            return result

    def lost(self, step: str, exc: BaseException) -> None:
        """Record a lost connection in `step` and drop this thread's broken connection."""
        close_thread_connection()
        with self._lock:
            since = self.since
            first = since is None
            if since is None:
                since = self.since = self.clock()
                self.outages += 1
        if first:
            logger.warning("database unavailable since %s (in %s): %s; retrying", since.isoformat(), step, exc)
            self.report(since.isoformat())

    def back(self) -> None:
        if self.since is None:  # the common case: one attribute read, no lock
            return
        with self._lock:
            since, self.since = self.since, None
        if since is not None:
            secs = (self.clock() - since).total_seconds()
            logger.warning("database available again after %.1f s of outage", secs)
            self.report(None)

    @property
    def unavailable(self) -> bool:
        return self.since is not None


def close_thread_connection() -> None:
    """Close the calling thread's Django connection so the next query opens a fresh one."""
    try:
        connection.close()
    except Exception:  # closing a dead socket may complain; it is closed either way
        logger.debug("closing a broken connection failed", exc_info=True)
