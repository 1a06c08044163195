"""The disk guard in the download path: no page download starts while free space is under the floor.

`crawler.workers` checks `storage_paused()` with its other controls and stops
leasing page downloads while it says why; `ensure_room_for_pages()` is the
last check before a chapter download (a job leased just before the disk
filled), raising `StorageFull`, which the worker settles by releasing the job
(no attempt spent, nothing failed or dead-lettered). See catalog.disk.
"""

from __future__ import annotations

from django.conf import settings

from catalog import disk
from crawler.errors import StorageFull


def storage_paused() -> str | None:
    """Why page downloads must wait (free space under CRAWLER_MIN_FREE_DISK), or None."""
    if settings.STORAGE_BACKEND != "filesystem":
        return None  # object storage: no free space to read
    floor = settings.CRAWLER_MIN_FREE_DISK
    if not floor.bytes and not floor.percent:
        return None
    root = str(settings.MEDIA_ROOT)
    return disk.pause_reason(disk.media_space(root), floor, root)


def ensure_room_for_pages() -> None:
    reason = storage_paused()
    if reason is not None:
        raise StorageFull(reason)
