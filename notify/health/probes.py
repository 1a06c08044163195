"""Where health conditions come from: probes, each a function of `now` returning the conditions that hold.

Notify's own probes read the job engine (a source's jobs mostly dead or all failing: its outage) and the crawl
workers' status rows (page downloads paused under the disk floor). Probes over other apps' state (an expired
session is the crawler's) are registered by the project, which may import both (`mangalord.health_probes`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q

from jobs.models import Job, JobState, WorkerStatus
from notify.health.conditions import Condition, SourceJobCounts, source_job_conditions

logger = logging.getLogger(__name__)

Probe = Callable[[datetime], list[Condition]]

_probes: dict[str, Probe] = {}

# A worker whose heartbeat is older than this is gone: its last "storage paused" flag says nothing now.
WORKER_GONE_AFTER = timedelta(minutes=2)


def register(name: str, probe: Probe) -> None:
    """Add (or replace) the probe `name`; its conditions' keys must start with `name` and a dot."""
    _probes[name] = probe


def registered() -> dict[str, Probe]:
    return dict(_probes)


def run_all(now: datetime) -> tuple[dict[str, str], set[str]]:
    """Every condition that holds now ({key: message}) and the names of the probes that failed."""
    holding: dict[str, str] = {}
    failed: set[str] = set()
    for name, probe in _probes.items():
        try:
            for condition in probe(now):
                holding[condition.key] = condition.message
        except Exception:  # a probe's own failure says nothing about the source: its conditions stay as they were
            logger.exception("health probe %s failed", name)
            failed.add(name)
    return holding, failed


def source_job_counts(now: datetime) -> dict[str, SourceJobCounts]:
    rows = (
        Job.objects.filter(updated_at__gte=now - timedelta(seconds=settings.NOTIFY_HEALTH_WINDOW))
        .exclude(source_id="")
        .values("source_id")
        .annotate(
            done=Count("id", filter=Q(state=JobState.DONE)),
            dead=Count("id", filter=Q(state=JobState.DEAD)),
            retrying=Count("id", filter=Q(state=JobState.PENDING, attempts__gt=0) & ~Q(last_error="")),
        )
        .order_by()
    )
    return {row["source_id"]: SourceJobCounts(row["done"], row["dead"], row["retrying"]) for row in rows}


def job_conditions(now: datetime) -> list[Condition]:
    return source_job_conditions(source_job_counts(now), settings.NOTIFY_DEAD_JOBS_MIN)


def disk_conditions(now: datetime) -> list[Condition]:
    """Page downloads paused under the disk floor, as a live crawl worker reports it (one condition, not per worker)."""
    reasons = WorkerStatus.objects.filter(
        stopped_at__isnull=True, heartbeat_at__gte=now - WORKER_GONE_AFTER
    ).values_list("flags__storage_paused", flat=True)
    reason = next((r for r in reasons if r), None)
    return [Condition("disk.floor", str(reason))] if reason else []


def register_builtin() -> None:
    register("jobs", job_conditions)
    register("disk", disk_conditions)
