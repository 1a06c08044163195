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

On object storage (STORAGE_BACKEND=s3) there is no free space to read; with
CRAWLER_S3_QUOTA set, the room is the quota less the bytes of the pages the
catalog holds (`stored_page_bytes`, one SUM recounted at most every
CRAWLER_SOURCE_STATS_SECS, never a bucket listing), and the same floor
applies to it. A reached quota pauses downloads whatever the floor.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django.db.models import Sum

from catalog import disk
from catalog.models import Page
from crawler import state_store
from sources.errors import StorageFull

logger = logging.getLogger(__name__)

SETTING = "CRAWLER_MIN_FREE_DISK"
OPERATOR = "the operator's floor (manage.py disk_floor)"
STORED_BYTES_KEY = "crawler:stored-page-bytes"


def current_floor() -> tuple[disk.Floor, str]:
    """(floor, who set it): the operator's run-time floor when there is one, else CRAWLER_MIN_FREE_DISK."""
    stored = state_store.disk_floor()
    if stored is not None:
        try:
            return disk.parse_floor(stored), OPERATOR
        except ValueError:  # written only after parse_floor accepted it; a hand-edited row falls back
            logger.warning("ignoring the stored disk floor %r: not a size", stored)
    return settings.CRAWLER_MIN_FREE_DISK, SETTING


def stored_page_bytes() -> int:
    """Bytes of every stored page by the catalog (Page.bytes), memoised for CRAWLER_SOURCE_STATS_SECS."""
    cached = cache.get(STORED_BYTES_KEY)
    if cached is not None:
        return int(cached)
    total = Page.objects.aggregate(total=Sum("bytes"))["total"] or 0
    cache.set(STORED_BYTES_KEY, total, settings.CRAWLER_SOURCE_STATS_SECS)
    return int(total)


def quota_paused() -> str | None:
    """Why page downloads must wait on object storage (CRAWLER_S3_QUOTA reached, or its room under the floor)."""
    quota = settings.CRAWLER_S3_QUOTA
    if not quota:
        return None
    stored = stored_page_bytes()
    where = f"S3 storage (CRAWLER_S3_QUOTA {disk.format_bytes(quota)})"
    if stored >= quota:
        return f"{disk.format_bytes(stored)} of stored pages reach CRAWLER_S3_QUOTA on {where}; page downloads paused"
    floor, set_by = current_floor()
    space = disk.Space(free=quota - stored, total=quota)
    return disk.pause_reason(space, floor, where, set_by, room="room left in the quota")


def storage_paused() -> str | None:
    """Why page downloads must wait (free space under the floor, or the S3 quota's room), or None."""
    if settings.STORAGE_BACKEND != "filesystem":
        return quota_paused()
    floor, set_by = current_floor()
    if not floor.bytes and not floor.percent:
        return None
    root = str(settings.MEDIA_ROOT)
    return disk.pause_reason(disk.media_space(root), floor, root, set_by)


def ensure_room_for_pages() -> None:
    reason = storage_paused()
    if reason is not None:
        raise StorageFull(reason)
