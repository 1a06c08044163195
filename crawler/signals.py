"""Cross-process "status changed" signal for dashboards.

Workers call `notify_status_changed()` after writing their status row. On
PostgreSQL it is a NOTIFY on `crawler_status`; with `REDIS_URL` set it is also
a Channels group message, so servers on other hosts hear it. On SQLite there
is no signal and stream servers poll.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection
from django.dispatch import Signal

logger = logging.getLogger(__name__)

STATUS_CHANNEL = "crawler_status"

# Sent in-process by `crawler.runtime` after a write that workers act on (a
# session flag, a browser-restart request), so a worker in the same process
# rereads its controls at once; workers in other processes reread them within
# a second (`crawler.workers.cadence`).
control_changed = Signal()
STATUS_GROUP = "crawler-status"


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


def notify_status_changed(detail: str = "") -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [STATUS_CHANNEL, detail])
    if settings.REDIS_URL:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        try:
            async_to_sync(layer.group_send)(STATUS_GROUP, {"type": "status.changed", "detail": detail})
        except Exception:  # a dashboard signal must never fail a worker
            logger.warning("status signal over the channel layer failed", exc_info=True)
