"""One status broadcaster per server process: every dashboard stream shares its listener and its composer.

If each stream composed the status itself on every worker signal, the
database load would grow with the number of tabs. Instead one
`StatusBroadcaster` per process owns a single change listener
(`console.dashboard.listeners`) and a single composer:

- pokes are coalesced for `DEBOUNCE_SECS` (a worker storing pages fires many
  a second), then the status is composed once, with queue counts memoised
  for `COUNTS_TTL_SECS`, and the same JSON goes to every subscriber;
- a slow periodic recompose catches what no one signals (a worker that died
  without a word shows as gone once its heartbeat is stale), and one query
  per keep-alive interval checks that every subscriber's session still
  exists, so a revoked session ends its stream and the browser's reconnect
  meets a 401.

The listener and composer run in threads (the ORM and psycopg are
blocking); subscribers are asyncio tasks woken through their own loop. The
threads run only while someone is subscribed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from console.dashboard import listeners
from console.dashboard.run import BroadcastStats, Run

logger = logging.getLogger(__name__)

DEBOUNCE_SECS = 0.25
COUNTS_TTL_SECS = 1.0
# Recompose this often without a signal: heartbeat staleness and changes no
# one signals (a control action's flag or requeue) show up within it.
REFRESH_SECS = 3.0
# Without LISTEN (SQLite, PgBouncer without DATABASE_DIRECT_URL): look at the worker status table this often.
POLL_SECS = 1.0

Compose = Callable[[], dict[str, Any]]


class TtlMemo:
    """Caches one zero-argument call for `ttl` seconds (the clock is injectable for tests)."""

    def __init__(self, fn: Callable[[], Any], ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._fn = fn
        self._ttl = ttl
        self._clock = clock
        self._value: Any = None
        self._expires_at: float | None = None

    def __call__(self) -> Any:
        now = self._clock()
        if self._expires_at is None or now >= self._expires_at:
            self._value = self._fn()
            self._expires_at = now + self._ttl
        return self._value


def default_compose(clock: Callable[[], float] = time.monotonic) -> Compose:
    """The one-shot status's compose function, with its queue counts memoised for this broadcaster."""
    from console.status import compose as status_compose

    counts = TtlMemo(status_compose.queue_counts, COUNTS_TTL_SECS, clock)
    return lambda: status_compose.compose_status(counts=counts())


@dataclass(frozen=True)
class Snapshot:
    version: int
    data: str


class Subscription:
    """One stream's view of the broadcaster: wakes its own event loop when a new snapshot lands."""

    def __init__(self, broadcaster: StatusBroadcaster, session_key: str | None) -> None:
        self.broadcaster = broadcaster
        self.session_key = session_key
        self.revoked = False
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()

    def notify(self) -> None:
        """Thread-safe: called from the composer thread."""
        try:
            self._loop.call_soon_threadsafe(self._wake.set)
        except RuntimeError:  # the loop is gone; close() is on its way
            pass

    async def next(self, seen_version: int, timeout: float) -> Snapshot | None:
        """The snapshot after `seen_version`, or None when `timeout` passes first (time for a keep-alive)."""
        self._wake.clear()
        latest = self.broadcaster.latest
        if latest is not None and latest.version != seen_version:
            return latest
        try:
            await asyncio.wait_for(self._wake.wait(), timeout)
        except TimeoutError:
            return None
        latest = self.broadcaster.latest
        return latest if latest is not None and latest.version != seen_version else None

    def close(self) -> None:
        self.broadcaster.unsubscribe(self)


class StatusBroadcaster:
    def __init__(
        self,
        compose: Compose | None = None,
        *,
        debounce: float = DEBOUNCE_SECS,
        refresh: float = REFRESH_SECS,
        auth_interval: float | None = None,
        listen: str | None = None,
        poll_interval: float = POLL_SECS,
    ) -> None:
        """`listen` picks the change source: "postgres", "channels", "poll" (default: by database and
        REDIS_URL), or "manual" (only `poke()`, for tests)."""
        self._compose = compose
        self._unavailable_since: datetime | None = None
        self.debounce = debounce
        self.refresh = refresh
        self.auth_interval = auth_interval if auth_interval is not None else settings.CRAWLER_STREAM_KEEPALIVE_SECS
        self.listen = listen
        self.poll_interval = poll_interval
        # The current (or last) run's counters.
        self.stats = BroadcastStats()
        self.latest: Snapshot | None = None
        self._lock = threading.Lock()
        self._subscribers: set[Subscription] = set()
        self._run: Run | None = None
        self._version = 0
        # Threads of the current run and of stopped runs that may still be exiting.
        self._threads: list[threading.Thread] = []
        self._fingerprint: str | None = None

    # --- subscribers (called on the event loop) -----------------------------------------

    def subscribe(self, session_key: str | None = None) -> Subscription:
        sub = Subscription(self, session_key)
        with self._lock:
            self._subscribers.add(sub)
            if self._run is None:
                self._start_locked()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(sub)
            if not self._subscribers and self._run is not None:
                # Nobody is listening: stop the threads (they exit within a
                # fraction of a second) and forget the snapshot, which would
                # be stale for the next first subscriber.
                self._run.stop.set()
                self._run.poke.set()  # wakes the composer out of its wait
                self._run = None
                self.latest = None
                self._fingerprint = None

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    @property
    def running(self) -> bool:
        with self._lock:
            return self._run is not None

    def poke(self) -> None:
        """Signal a change from this process (e.g. right after a control action)."""
        with self._lock:
            run = self._run
        if run is not None:
            run.stats.signals += 1
            run.poke.set()

    def join_stopped(self, timeout: float = 5.0) -> bool:
        """Wait for the threads of stopped runs to exit; True when none is left (for tests and shutdown)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            current = self._run.threads if self._run is not None else []
            stopped = [t for t in self._threads if t not in current]
        for thread in stopped:
            thread.join(max(deadline - time.monotonic(), 0))
        return not any(t.is_alive() for t in stopped)

    # --- threads ------------------------------------------------------------------------

    def _start_locked(self) -> None:
        run = Run()
        source = self.listen or listeners.default_source()
        sources: dict[str, Callable[[Run], None]] = {
            "postgres": listeners.listen_postgres,
            "channels": listeners.listen_channels,
            "poll": lambda run: listeners.poll(run, lambda fn: self._counted(run, fn), self.poll_interval),
        }
        run.threads = [threading.Thread(target=self._compose_loop, args=(run,), name="status-composer", daemon=True)]
        if source != "manual":
            run.threads.append(
                threading.Thread(target=sources[source], args=(run,), name=f"status-listener-{source}", daemon=True)
            )
        self._threads = [t for t in self._threads if t.is_alive()] + run.threads
        self._run = run
        self.stats = run.stats
        for thread in run.threads:
            thread.start()

    def _compose_loop(self, run: Run) -> None:
        try:
            self._publish(run)
            next_refresh = time.monotonic() + self.refresh
            next_auth = time.monotonic() + self.auth_interval
            while not run.stop.is_set():
                wait = max(min(next_refresh, next_auth) - time.monotonic(), 0)
                poked = run.poke.wait(wait)
                if run.stop.is_set():
                    break
                if poked:
                    # Coalesce: every signal in the next window rides on one
                    # compose. A fixed window (not one reset by each signal)
                    # keeps a constantly busy worker from starving the stream.
                    run.stop.wait(self.debounce)
                    run.poke.clear()
                    self._publish(run)
                    # That compose may have used queue counts memoised just
                    # before the change; recompose once the memo has lapsed.
                    next_refresh = time.monotonic() + min(COUNTS_TTL_SECS, self.refresh)
                elif time.monotonic() >= next_refresh:
                    self._publish(run)
                    next_refresh = time.monotonic() + self.refresh
                if time.monotonic() >= next_auth:
                    self._revoke_ended_sessions(run)
                    next_auth = time.monotonic() + self.auth_interval
        finally:
            connection.close()
            stats = run.stats
            # The fan-out benchmark reads this line: the run's DB work, whatever its audience.
            logger.info(
                "status broadcaster run ended seconds=%.2f composes=%d queries=%d signals=%d published=%d",
                time.monotonic() - run.started,
                stats.composes,
                stats.queries,
                stats.signals,
                stats.published,
            )

    def _counted(self, run: Run, fn: Callable[[], Any]) -> Any:
        def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            run.stats.queries += 1
            return execute(sql, params, many, context)

        try:
            with connection.execute_wrapper(count):
                return fn()
        except DatabaseError:
            # A dropped connection must not kill the stream; the next
            # signal or refresh reconnects.
            logger.warning("status compose failed", exc_info=True)
            connection.close()
            return None

    def _publish(self, run: Run) -> None:
        if self._compose is None:
            self._compose = default_compose()
        compose = self._compose
        run.stats.composes += 1
        status = self._counted(run, compose)
        if status is None:
            # The database is unreachable from here: say so (and since when) instead of going quiet.
            self._unavailable_since = self._unavailable_since or timezone.now()
            status = {"database_unavailable_since": self._unavailable_since.isoformat()}
        else:
            self._unavailable_since = None
        data = json.dumps(status, default=str, separators=(",", ":"))
        # The compose time alone moving is not news.
        fingerprint = json.dumps({k: v for k, v in status.items() if k != "generated_at"}, default=str)
        with self._lock:
            if run is not self._run:
                return  # a stopped run's late compose must not leak into the next run
            if fingerprint == self._fingerprint:
                return  # nothing moved: no event, the keep-alives carry on
            self._fingerprint = fingerprint
            self._version += 1
            self.latest = Snapshot(self._version, data)
            subscribers = list(self._subscribers)
        run.stats.published += 1
        for sub in subscribers:
            sub.notify()

    def _revoke_ended_sessions(self, run: Run) -> None:
        """One query for all subscribers: end the streams whose session was deleted or expired."""
        from django.contrib.sessions.models import Session
        from django.utils import timezone

        with self._lock:
            subscribers = [s for s in self._subscribers if s.session_key and not s.revoked]
        if not subscribers:
            return
        keys = {s.session_key for s in subscribers}
        alive = self._counted(
            run,
            lambda: set(
                Session.objects.filter(session_key__in=keys, expire_date__gt=timezone.now()).values_list(
                    "session_key", flat=True
                )
            ),
        )
        if alive is None:
            return
        for sub in subscribers:
            if sub.session_key not in alive:
                sub.revoked = True
                sub.notify()


_broadcaster: StatusBroadcaster | None = None
_broadcaster_lock = threading.Lock()


def get_broadcaster() -> StatusBroadcaster:
    """The process-wide broadcaster every stream of this server shares."""
    global _broadcaster
    with _broadcaster_lock:
        if _broadcaster is None:
            _broadcaster = StatusBroadcaster()
        return _broadcaster
