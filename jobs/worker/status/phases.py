"""What a worker is doing now, as the dashboard shows it: plain dicts tagged by "state", so they serialise as they are.

The pipeline sets one with `StatusHandle.set_phase` (`jobs.worker.status.handle`);
the status composition of the console picks the most interesting one across workers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def idle(next_fire: datetime | None = None) -> dict[str, Any]:
    return {"state": "idle", "next_fire": next_fire.isoformat() if next_fire else None}


def walking_list() -> dict[str, Any]:
    return {"state": "walking_list"}


def fetching_metadata(index: int, total: int | None, title: str) -> dict[str, Any]:
    return {"state": "fetching_metadata", "index": index, "total": total, "title": title}


def cover_backfill(index: int, total: int) -> dict[str, Any]:
    return {"state": "cover_backfill", "index": index, "total": total}


def reconciling(walked: int, enqueued: int) -> dict[str, Any]:
    return {"state": "reconciling", "walked": walked, "enqueued": enqueued}
