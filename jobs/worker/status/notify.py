"""Cross-process "status changed" signal for dashboards.

Workers call `notify_status_changed()` after writing their status row. On
PostgreSQL it is a NOTIFY on `crawler_status`; with `REDIS_URL` set it is also
a Channels group message, so servers on other hosts hear it. On SQLite there
is no signal and stream servers poll.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection

from jobs import queries

logger = logging.getLogger(__name__)

# The channel `notify_status` (jobs/queries.sql) sends on and the dashboards LISTEN to.
STATUS_CHANNEL = "crawler_status"

STATUS_GROUP = "crawler-status"


def notify_status_changed(detail: str = "") -> None:
    if connection.vendor == "postgresql":
        queries.run("notify_status", {"detail": detail})
    if settings.REDIS_URL:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        try:
            async_to_sync(layer.group_send)(STATUS_GROUP, {"type": "status.changed", "detail": detail})
        except Exception:  # a dashboard signal must never fail a worker
            logger.warning("status signal over the channel layer failed", exc_info=True)
