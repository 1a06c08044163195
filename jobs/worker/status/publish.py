"""Publish one worker process's live status to its `WorkerStatus` row.

Workers are separate processes, possibly on several hosts, so the in-memory
`StatusHandle` each one keeps is mirrored into a database row that the
dashboard and the operator API compose and read. The publisher
listens to the handle, coalesces bursts of changes (a page stored every few
milliseconds must not become a write every few milliseconds) into one write
per `DEBOUNCE_SECS`, heartbeats the row every `HEARTBEAT_SECS` even when
nothing changes, and signals dashboards after each write. A row whose
heartbeat stops is shown as gone; a clean exit stamps `stopped_at`.

Behind a pooler with `DATABASE_DIRECT_URL`, a write the pooler cannot take
(it is down) goes around it to PostgreSQL: the row keeps its heartbeat and
says since when the worker's database path is unavailable, instead of going
silent.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from jobs.models import WorkerStatus
from jobs.worker.hooks import RoleHooks
from jobs.worker.status.handle import StatusHandle, StatusSnapshot
from jobs.worker.status.notify import notify_status_changed
from jobs.worker.status.phases import idle

logger = logging.getLogger(__name__)

DEBOUNCE_SECS = 0.25
HEARTBEAT_SECS = 5.0
# Rows of workers that stopped (or vanished) this long ago are deleted at the
# next worker start, so restarts do not grow the table forever.
RETENTION = timedelta(days=7)


def row_fields(snapshot: StatusSnapshot, extra_flags: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `WorkerStatus` columns that mirror a status snapshot."""
    flags = dict(snapshot.flags)
    flags.update(extra_flags or {})
    return {
        "phase": snapshot.phase,
        "worker_count": snapshot.worker_count,
        "active_chapters": snapshot.active_chapters,
        "current_cover": snapshot.current_cover,
        "flags": flags,
    }


class StatusPublisher:
    """Owns this process's `WorkerStatus` row; use as a context manager around the worker's life.

    `extra_flags` is called at each write for values that live outside the
    handle (the browser's state), so they are fresh without the worker having
    to poke the handle for them.
    """

    def __init__(
        self,
        status: StatusHandle,
        *,
        role: str,
        kinds: list[str] | None,
        extra_flags: Callable[[], dict[str, Any]] | None = None,
        debounce_secs: float = DEBOUNCE_SECS,
        heartbeat_secs: float = HEARTBEAT_SECS,
        call: Callable[..., Any] | None = None,
    ) -> None:
        self.status = status
        self.role = role
        self.kinds = list(kinds or [])
        self.extra_flags = extra_flags or dict
        self.debounce_secs = debounce_secs
        self.heartbeat_secs = heartbeat_secs
        self.row_id: Any = None
        # How the row's first write is made: the worker passes its outage-riding `call(step, fn)`.
        self.call = call or (lambda _step, fn, *args, **kwargs: fn(*args, **kwargs))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> StatusPublisher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self.row_id = self.call("status", self._create_row)
        self._thread = threading.Thread(target=self._run, name=f"status-{self.role}", daemon=True)
        self._thread.start()

    def _create_row(self) -> Any:
        now = timezone.now()
        WorkerStatus.objects.filter(heartbeat_at__lt=now - RETENTION).delete()
        row = WorkerStatus.objects.create(
            role=self.role,
            host=socket.gethostname(),
            pid=os.getpid(),
            kinds=self.kinds,
            heartbeat_at=now,
            **row_fields(self.status.snapshot(), self._safe_extra_flags()),
        )
        notify_status_changed(self.role)
        return row.id

    def stop(self) -> None:
        """Final write: idle, nothing active, `stopped_at` stamped (a clean exit, not a vanished worker)."""
        self._stop.set()
        self.status.poke()  # wake the publisher thread out of its wait
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.row_id is None:
            return
        now = timezone.now()
        try:
            self._write(phase=idle(), active_chapters=[], current_cover=None, heartbeat_at=now, stopped_at=now)
        except DatabaseError as exc:  # an outage at exit: the row goes stale and shows as gone
            logger.warning("status: the final write of the worker row failed: %s", exc)
        finally:
            connection.close()

    def publish(self) -> None:
        """Write the current snapshot and heartbeat now, then signal dashboards."""
        self._write(heartbeat_at=timezone.now(), **row_fields(self.status.snapshot(), self._safe_extra_flags()))

    def _write(self, **fields: Any) -> None:
        """Update the row and signal dashboards; around a dead pooler when a direct database is configured."""
        try:
            WorkerStatus.objects.filter(id=self.row_id).update(**fields)
        except DatabaseError:
            if settings.DIRECT_DB not in settings.DATABASES:
                raise
            connection.close()
            WorkerStatus.objects.using(settings.DIRECT_DB).filter(id=self.row_id).update(**fields)
            connections[settings.DIRECT_DB].close()
            return  # dashboards poll or hear the next signal: NOTIFY would go through the dead pooler
        notify_status_changed(self.role)

    def _safe_extra_flags(self) -> dict[str, Any]:
        try:
            return self.extra_flags()
        except Exception:  # a flag probe must never stop status publishing
            logger.warning("status: extra flags probe failed", exc_info=True)
            return {}

    def _run(self) -> None:
        seen = self.status.snapshot().version
        try:
            while not self._stop.is_set():
                version = self.status.wait_for_change(seen, self.heartbeat_secs)
                if self._stop.is_set():
                    break
                if version != seen:
                    # Let the burst settle so one write carries all of it.
                    self._stop.wait(self.debounce_secs)
                    seen = self.status.snapshot().version
                _drop_broken_connection()
                try:
                    self.publish()
                except Exception as exc:  # the next heartbeat retries; a dashboard glitch must not kill the worker
                    logger.warning("status: publishing the worker row failed: %s", exc)
        finally:
            connection.close()


def _drop_broken_connection() -> None:
    """Replace the publisher thread's connection only when it failed (an outage); otherwise keep it.

    `close_old_connections` would also close it for its age, and with the
    web's CONN_MAX_AGE of 0 that is every write: a PostgreSQL backend forked
    for each status write of a busy worker.
    """
    if connection.connection is None or not connection.errors_occurred:
        return
    if connection.is_usable():
        connection.errors_occurred = False
    else:
        connection.close()


class PublishedStatus(RoleHooks):
    """A role whose worker mirrors its `StatusHandle` into a `WorkerStatus` row for the dashboard."""

    def __init__(self, status: StatusHandle) -> None:
        self.status = status

    def extra_flags(self) -> dict[str, Any]:
        return {}

    def publisher(self, *, role: str, kinds: list[str], call: Callable[..., Any]) -> AbstractContextManager[Any]:
        return StatusPublisher(self.status, role=role, kinds=kinds, extra_flags=self.extra_flags, call=call)
