"""Where the status broadcaster hears that something moved: a poke for each change, from one of three sources.

PostgreSQL `LISTEN` on the status channel (and the job channel, whose NOTIFY
means queue counts moved); the Channels group when `REDIS_URL` is set and
there is no LISTEN session (SQLite, or PgBouncer without
DATABASE_DIRECT_URL); otherwise a one-query poll of the worker status table.
Each runs in its own thread for one busy period of the broadcaster
(`console.dashboard.broadcaster`, `console.dashboard.run`) and stops with it.
"""

from __future__ import annotations

import asyncio
import logging
import select
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

from console.dashboard.run import Run
from jobs.wakeup import can_listen, listen_connection
from jobs.worker.status.notify import STATUS_CHANNEL, STATUS_GROUP

logger = logging.getLogger(__name__)

JOB_CHANNEL = "crawler_jobs"

# Runs a query on the broadcaster's connection, counted in the run's stats; None if the database failed.
Counted = Callable[[Callable[[], Any]], Any]


def listen_postgres(run: Run) -> None:
    """LISTEN on the status and job channels; every notification heard is a poke."""
    import psycopg

    while not run.stop.is_set():
        try:
            with listen_connection(STATUS_CHANNEL, JOB_CHANNEL) as conn:
                # Whatever changed while (re)connecting was not heard.
                run.poke.set()
                while not run.stop.is_set():
                    # Short slices keep the thread responsive to stop.
                    if not select.select([conn.fileno()], [], [], 0.25)[0]:
                        continue
                    heard = sum(1 for _ in conn.notifies(timeout=0, stop_after=512))
                    if heard:
                        run.stats.signals += heard
                        run.poke.set()
        except psycopg.Error:
            logger.warning("status listener lost its connection; reconnecting", exc_info=True)
            run.stop.wait(1.0)


def listen_channels(run: Run) -> None:
    """The Channels group the workers signal when there is no LISTEN session but a channel layer."""
    asyncio.run(_listen_channels_async(run))


async def _listen_channels_async(run: Run) -> None:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(STATUS_GROUP, channel)
    try:
        while not run.stop.is_set():
            try:
                await asyncio.wait_for(layer.receive(channel), 0.25)
            except TimeoutError:
                continue
            run.stats.signals += 1
            run.poke.set()
    finally:
        await layer.group_discard(STATUS_GROUP, channel)


def poll(run: Run, counted: Counted, interval: float) -> None:
    """No LISTEN and no channel layer: one small query a second; a moved worker row is a signal."""
    from django.db.models import Count, Max

    from jobs.models import Job, WorkerStatus

    seen: Any = None
    try:
        while not run.stop.wait(interval):
            mark = counted(
                lambda: (
                    WorkerStatus.objects.aggregate(n=Count("id"), at=Max("heartbeat_at"), gone=Max("stopped_at")),
                    Job.objects.aggregate(at=Max("updated_at")),
                ),
            )
            # The first mark counts as a change too: whatever moved
            # between the run's first compose and this poll is not lost.
            if mark is not None and mark != seen:
                run.stats.signals += 1
                run.poke.set()
                seen = mark
    finally:
        connection.close()


def default_source() -> str:
    """Where this process hears of status changes: "postgres", "channels" or "poll"."""
    # Behind PgBouncer without DATABASE_DIRECT_URL there is no LISTEN session:
    # the channel layer if there is one, else the one-second poll.
    if can_listen():
        return "postgres"
    if settings.REDIS_URL:
        return "channels"
    return "poll"
