"""The Sources page's read model: every source with its crawl state, in a fixed number of queries.

One aggregate query per column (last passes, passes in flight, queued
chapters, dead jobs, throttles, challenge passes) whatever the number of sources, so the page
costs the same with 3 sources or 300 (pinned by a query-count test).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from catalog.models import Chapter, Source
from console.control.sites import next_scheduled_pass
from crawler.clearance.rows import ChallengeState, challenge_states
from crawler.factory import source_politeness
from crawler.models import CrawlerState, SourceThrottle
from jobs.models import IN_FLIGHT_STATES, Job, JobState
from sources.errors import CrawlerError

LAST_PASS_PREFIX, LAST_PASS_SUFFIX = "metadata_pass:", ":last_pass"


@dataclass(frozen=True)
class SourceState:
    source: Source
    last_pass_at: dt.datetime | None
    last_pass: dict[str, Any] | None  # the pass summary (discovered, upserted, ...)
    pass_in_flight: bool
    next_pass_at: dt.datetime | None  # None: disabled, or a pass is already queued/running
    chapters_queued: int
    dead_jobs: int
    cooling_until: dt.datetime | None
    cooling_reason: str
    rate_limit: float | None  # None when the settings do not validate (settings_error says why)
    max_concurrency: int | None
    settings_error: str
    challenge: ChallengeState | None  # None: the source never answered a JavaScript challenge


def _politeness(row: Source) -> tuple[float | None, int | None, str]:
    try:
        policy = source_politeness(row)
    except (CrawlerError, TypeError, AttributeError) as exc:
        return None, None, str(exc)
    return policy.rate_limit, policy.max_concurrency, ""


def _per_source(rows: Any, key: str) -> dict[str, int]:
    return {r[key]: r["n"] for r in rows.annotate(n=Count("pk"))}


def source_states(now: dt.datetime | None = None) -> list[SourceState]:
    now = now or timezone.now()
    sources = list(Source.objects.order_by("id"))
    summaries = {
        row.key.removeprefix(LAST_PASS_PREFIX).removesuffix(LAST_PASS_SUFFIX): row.value
        for row in CrawlerState.objects.filter(key__startswith=LAST_PASS_PREFIX, key__endswith=LAST_PASS_SUFFIX)
    }
    in_flight = set(
        Job.objects.filter(kind="metadata_pass", state__in=IN_FLIGHT_STATES).values_list("source_id", flat=True)
    )
    queued = _per_source(
        Chapter.objects.filter(
            dropped_at__isnull=True, sync_state__in=[Chapter.SyncState.QUEUED, Chapter.SyncState.DOWNLOADING]
        ).values("source_id"),
        "source_id",
    )
    dead = _per_source(Job.objects.filter(state=JobState.DEAD).values("source_id"), "source_id")
    throttles = {t.source_id: t for t in SourceThrottle.objects.filter(cooling_until__gt=now)}
    challenges = challenge_states(now)
    scheduled = next_scheduled_pass(now)
    states = []
    for row in sources:
        summary = summaries.get(row.id) if isinstance(summaries.get(row.id), dict) else None
        throttle = throttles.get(row.id)
        rate, concurrency, error = _politeness(row)
        busy = row.id in in_flight
        states.append(
            SourceState(
                source=row,
                last_pass_at=parse_datetime(summary["at"]) if summary and summary.get("at") else None,
                last_pass=summary,
                pass_in_flight=busy,
                next_pass_at=scheduled if row.enabled and not busy else None,
                chapters_queued=queued.get(row.id, 0),
                dead_jobs=dead.get(row.id, 0),
                cooling_until=throttle.cooling_until if throttle else None,
                cooling_reason=throttle.cooling_reason if throttle else "",
                rate_limit=rate,
                max_concurrency=concurrency,
                settings_error=error,
                challenge=challenges.get(row.id),
            )
        )
    return states
