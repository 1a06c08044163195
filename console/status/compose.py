"""The one-shot crawler status: worker rows + queue counts + durable flags, composed in one place.

The admin API's status endpoint and the SSE stream (`console.dashboard`) both call `compose_status`,
so the two can never disagree. The stream memoises `queue_counts()` (one
GROUP BY) and passes it in, so many dashboard tabs do not multiply that query.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from console.status.source_stats import source_stats
from crawler import state_store
from crawler.clearance import rows as clearance_store
from crawler.passes import disk_guard
from crawler.politeness import limiter
from jobs.counts import queue_counts
from jobs.models import WorkerStatus
from jobs.worker.status.publish import HEARTBEAT_SECS

# A worker that missed three heartbeats is gone (killed, host down, hung).
GONE_AFTER = timedelta(seconds=3 * HEARTBEAT_SECS)
# Gone workers stay listed this long so an operator notices them, then drop out.
GONE_LISTED_FOR = timedelta(hours=1)

# Most interesting first: what an operator most wants to see in the hero.
PHASE_PRIORITY = ("fetching_metadata", "reconciling", "cover_backfill", "walking_list", "idle")


def most_interesting_phase(phases: list[dict[str, Any]]) -> dict[str, Any]:
    """The phase to show for the whole crawler: the busiest kind of work any live worker is doing.

    Among idle workers the earliest `next_fire` wins, since that is when
    something happens next.
    """
    if not phases:
        return {"state": "idle", "next_fire": None}

    def rank(phase: dict[str, Any]) -> tuple[int, str]:
        state = phase.get("state", "idle")
        priority = PHASE_PRIORITY.index(state) if state in PHASE_PRIORITY else len(PHASE_PRIORITY)
        # ISO timestamps sort as strings; a missing next_fire sorts last.
        return priority, phase.get("next_fire") or "~"

    return dict(min(phases, key=rank))


def is_live(heartbeat_at: datetime, now: datetime) -> bool:
    return now - heartbeat_at <= GONE_AFTER


def compose_status(now: datetime | None = None, *, counts: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    """Everything the dashboard shows, as one JSON-ready dict."""
    now = now or timezone.now()
    rows = list(
        WorkerStatus.objects.filter(stopped_at__isnull=True, heartbeat_at__gte=now - GONE_LISTED_FOR).order_by(
            "role", "host", "pid"
        )
    )
    workers = [_worker_entry(row, now) for row in rows]
    live = [w for w in workers if w["state"] == "live"]
    # Newest heartbeat first, so the freshest cover wins when two workers fetch covers.
    live_newest_first = sorted(live, key=lambda w: w["heartbeat_at"], reverse=True)

    active_chapters = [c for w in live for c in w["active_chapters"]]
    active_chapters.sort(key=lambda c: (c.get("manga_title", ""), float(c.get("chapter_number") or 0)))
    covers = [w["current_cover"] for w in live_newest_first if w["current_cover"]]
    circuit_until = [w["flags"]["circuit_open_until"] for w in live if w["flags"].get("circuit_open_until")]
    browsers = {f"{w['host']}:{w['pid']}": w["flags"]["browser"] for w in live if w["flags"].get("browser")}

    return {
        "generated_at": now.isoformat(),
        "phase": most_interesting_phase([w["phase"] for w in live]),
        "worker_count": sum(w["worker_count"] for w in live if w["role"] == "crawl"),
        "busy": len(active_chapters),
        "workers": workers,
        "active_chapters": active_chapters,
        "current_cover": covers[0] if covers else None,
        "queue": counts if counts is not None else queue_counts(),
        "session_expired": state_store.expired_sessions(),
        "browser": browsers,
        "circuit": {"open": bool(circuit_until), "open_until": max(circuit_until) if circuit_until else None},
        # Sources told to come back later (429/503 Retry-After): no worker requests them until `until`.
        "cooling_down": limiter.cooling_status(now),
        # JavaScript challenges per source: passes, the last one (when, browser or solver), cookie expiry, failure.
        "challenges": clearance_store.challenge_status(now),
        "last_pass": state_store.latest_pass_summary(),
        # Page downloads paused for want of disk space (CRAWLER_MIN_FREE_DISK), and the space left.
        "storage": storage_status(live),
        # Per source: download policy, chapters downloaded / waiting / not wanted, storage (memoised).
        "sources": source_stats(),
        # Workers that lost their database connection and are retrying (jobs.worker.outage); a worker
        # whose outage outlasts its heartbeat shows it here as its last word, marked gone.
        "database_unavailable": [
            {
                "worker": f"{w['host']}:{w['pid']}",
                "since": w["flags"]["database_unavailable_since"],
                "state": w["state"],
            }
            for w in workers
            if w["flags"].get("database_unavailable_since")
        ],
    }


def storage_status(live_workers: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether page downloads are paused and why: as a live worker reported it, or as this process sees MEDIA_ROOT."""
    reported = [w["flags"]["storage_paused"] for w in live_workers if w["flags"].get("storage_paused")]
    reason = disk_guard.storage_paused() or (reported[0] if reported else None)
    # Free bytes move all the time: they ride with the memoised source figures (`sources.disk`), or every
    # change of a byte would be a new status for every dashboard.
    return {"downloads_paused": reason is not None, "reason": reason}


def downloads_paused(now: datetime | None = None) -> str | None:
    """`storage_status`'s reason for a page without the live workers at hand (the Sources page): one query."""
    now = now or timezone.now()
    reports = WorkerStatus.objects.filter(stopped_at__isnull=True, heartbeat_at__gte=now - GONE_AFTER).values_list(
        "flags__storage_paused", flat=True
    )
    return disk_guard.storage_paused() or next((reason for reason in reports if reason), None)


def _worker_entry(row: WorkerStatus, now: datetime) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "role": row.role,
        "host": row.host,
        "pid": row.pid,
        "kinds": row.kinds,
        "worker_count": row.worker_count,
        "state": "live" if is_live(row.heartbeat_at, now) else "gone",
        "phase": row.phase or {"state": "idle", "next_fire": None},
        "active_chapters": row.active_chapters or [],
        "current_cover": row.current_cover,
        "flags": row.flags or {},
        "started_at": row.started_at.isoformat(),
        "heartbeat_at": row.heartbeat_at.isoformat(),
    }
