"""The disk guard in the download path: no page download starts while free space is under the floor.

The floor is CRAWLER_MIN_FREE_DISK unless an operator set one at run time
(`manage.py disk_floor`, kept in the state store): `current_floor()` reads
that on every check, so lowering it resumes downloads in running workers
without a restart. `crawler.workers` checks `storage_paused()` with its
other controls and stops leasing page downloads while it says why;
`ensure_room_for_pages()` is the last check before a chapter download (a job
leased just before the disk filled), raising `StorageFull`, which the worker
settles by releasing the job (no attempt spent, nothing failed or
dead-lettered). See catalog.disk.
"""

from __future__ import annotations

import logging

from django.conf import settings

from catalog import disk
from crawler import state_store
from crawler.errors import StorageFull

logger = logging.getLogger(__name__)

SETTING = "CRAWLER_MIN_FREE_DISK"
OPERATOR = "the operator's floor (manage.py disk_floor)"


def current_floor() -> tuple[disk.Floor, str]:
    """(floor, who set it): the operator's run-time floor when there is one, else CRAWLER_MIN_FREE_DISK."""
    stored = state_store.disk_floor()
    if stored is not None:
        try:
            return disk.parse_floor(stored), OPERATOR
        except ValueError:  # written only after parse_floor accepted it; a hand-edited row falls back
            logger.warning("ignoring the stored disk floor %r: not a size", stored)
    return settings.CRAWLER_MIN_FREE_DISK, SETTING


def storage_paused() -> str | None:
    """Why page downloads must wait (free space under the floor), or None."""
    if settings.STORAGE_BACKEND != "filesystem":
        return None  # object storage: no free space to read
    floor, set_by = current_floor()
    if not floor.bytes and not floor.percent:
        return None
    root = str(settings.MEDIA_ROOT)
    return disk.pause_reason(disk.media_space(root), floor, root, set_by)


def ensure_room_for_pages() -> None:
    reason = storage_paused()
    if reason is not None:
        raise StorageFull(reason)
