"""The notify worker role: sends `notify_send` jobs, and runs the digest pass and the health check on a cadence.

Its own role, so notifications never take a crawl worker's slot and a dead notification service never slows a
crawl: `manage.py notify_worker` beside `crawl_worker` under systemd.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings

from jobs.worker.config import Periodic
from jobs.worker.loop import Worker, WorkerConfig
from jobs.worker.status.handle import StatusHandle
from jobs.worker.status.publish import PublishedStatus
from notify.digests.passes import run_scheduled_pass
from notify.handlers import ROLE
from notify.health.alerts import check_health


def _digest_pass() -> None:
    run_scheduled_pass()


def _health_check() -> None:
    check_health()


def notify_worker(*, concurrency: int = 1, schedule: bool = True, **overrides: Any) -> Worker:
    """A worker of the `notify` role; with `schedule` it also runs digest passes and health checks (first at boot)."""
    status = StatusHandle(concurrency)
    periodic = []
    if schedule:
        periodic = [
            # Checked every minute at most; the pass itself keeps NOTIFY_DIGEST_INTERVAL across every notify worker.
            Periodic("digest_pass", timedelta(seconds=min(60, settings.NOTIFY_DIGEST_INTERVAL)), _digest_pass),
            Periodic("health_check", timedelta(seconds=settings.NOTIFY_HEALTH_INTERVAL), _health_check),
        ]
    config = WorkerConfig.for_role(
        ROLE, concurrency=concurrency, hooks=PublishedStatus(status), periodic=periodic, **overrides
    )
    return Worker(config, status=status)
