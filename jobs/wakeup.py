"""Wake-ups: idle workers LISTEN for the NOTIFY that `jobs.queue` sends when a job becomes pending.

On PostgreSQL a dedicated autocommit connection LISTENs (around a transaction
pooler when DATABASE_DIRECT_URL is set); elsewhere waits are an interruptible
poll (`JOBS_POLL_SECS`).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection

from jobs.queue import NOTIFY_CHANNEL


def can_listen() -> bool:
    """Whether this process can hold a LISTEN session.

    PostgreSQL directly, yes. Behind PgBouncer in transaction mode a LISTEN
    would stay on a server session that the next transaction never sees, so
    only with DATABASE_DIRECT_URL (a connection around the pooler); without
    it workers and the status stream poll instead. NOTIFY needs no session:
    it is sent inside a transaction and works through the pooler.
    """
    return connection.vendor == "postgresql" and (not settings.DATABASE_POOLER or bool(settings.DATABASE_DIRECT_URL))


def listen_connection(*channels: str) -> Any:
    """A dedicated autocommit PostgreSQL connection LISTENing on `channels` (the caller closes it).

    Separate from Django's connection: a listener idles for hours, and
    notifications are only delivered outside a transaction. It goes to
    DATABASE_DIRECT_URL when that is set (around a transaction pooler), to
    DATABASE_URL otherwise. Call only when `can_listen()`.
    """
    import psycopg

    if not can_listen():
        raise RuntimeError("LISTEN behind DATABASE_POOLER needs DATABASE_DIRECT_URL; check can_listen() first")
    if settings.DATABASE_DIRECT_URL:
        conn = psycopg.connect(**_direct_params(settings.DATABASE_DIRECT_URL), autocommit=True)
    else:
        params = connection.get_connection_params()
        # Django's psycopg options that a plain connection does not take.
        for key in ("cursor_factory", "context", "server_side_binding", "prepare_threshold"):
            params.pop(key, None)
        conn = psycopg.connect(**params, autocommit=True)
    for channel in channels:
        conn.execute(f"LISTEN {channel}")
    return conn


def _direct_params(url: str) -> dict[str, Any]:
    """psycopg keyword arguments for DATABASE_DIRECT_URL, parsed as Django parses DATABASE_URL."""
    import environ

    config = environ.Env.db_url_config(url)
    params = {
        "dbname": config["NAME"],
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
    }
    return {**{k: v for k, v in params.items() if v is not None}, **config.get("OPTIONS", {})}


class JobListener:
    """Wakes an idle worker when a job of its kinds is enqueued.

    On PostgreSQL a dedicated autocommit connection LISTENs for the NOTIFY that
    `enqueue` sends, so a new job starts within milliseconds. Elsewhere (SQLite,
    or behind PgBouncer without DATABASE_DIRECT_URL: see `can_listen`) `wait`
    is an interruptible poll interval, so a new job waits up to JOBS_POLL_SECS. Open it before the first lease so
    a job enqueued between an empty lease and the wait is not missed.
    """

    def __init__(self, kinds: list[str] | None, stop: threading.Event | None = None) -> None:
        self.kinds = set(kinds) if kinds is not None else None
        self.stop = stop or threading.Event()
        self._conn: Any = None

    def __enter__(self) -> JobListener:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Start LISTENing (again, after `close`) when this process can; else `wait` polls."""
        if can_listen() and self._conn is None:
            self._conn = listen_connection(NOTIFY_CHANNEL)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def wait(self, timeout: float) -> bool:
        """Block until a matching job is announced, `timeout` passes or stop is set; True if announced."""
        if self._conn is None:
            self.stop.wait(timeout)
            return False
        deadline = time.monotonic() + timeout
        while not self.stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # Short slices keep the wait responsive to the stop event;
            # notifies() also hands back any announcement that arrived while
            # nobody was waiting (psycopg keeps a backlog), so none is missed.
            for note in self._conn.notifies(timeout=min(remaining, 0.25), stop_after=1):
                if self.kinds is None or note.payload in self.kinds:
                    return True
        return False
