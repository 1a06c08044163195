"""Setting the disk guard's floor at run time (crawler.passes.disk_guard), for the CLI and the admin alike.

CRAWLER_MIN_FREE_DISK is read when a process starts; an operator who frees
space, or accepts a fuller disk, sets a floor here instead and every running
crawl worker picks it up on its next control check (about a second): a lower
floor resumes paused page downloads, a higher one pauses them, no restart.
Clearing it returns to the setting. Audited.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db import transaction

from catalog import disk
from console.control.errors import ControlError
from console.status.source_stats import CACHE_KEY
from crawler import audit, state_store
from crawler.passes import disk_guard


def set_disk_floor(*, actor: Any, floor: str | None) -> tuple[disk.Floor, str]:
    """Store the operator's floor (None: clear it, back to CRAWLER_MIN_FREE_DISK); (floor now in force, set by).

    A floor that is not a size raises ControlError naming the accepted forms, changing nothing.
    """
    before, before_by = disk_guard.current_floor()
    if floor is not None:
        try:
            disk.parse_floor(floor)
        except ValueError as exc:
            raise ControlError(f"disk floor: {exc}") from exc
        floor = floor.strip()  # kept as written: a rounded rendering would move the floor
    with transaction.atomic():
        state_store.set_disk_floor(floor)
        audit.record(
            actor,
            "set_disk_floor",
            scope="storage",
            detail={"before": str(before), "before_set_by": before_by, "after": floor},
        )
    cache.delete(CACHE_KEY)  # the dashboard's disk line shows the new floor at once
    return disk_guard.current_floor()
