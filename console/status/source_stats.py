"""Per source, for the dashboard: download policy, chapters downloaded / waiting / not wanted, storage used;
and the free space under MEDIA_ROOT.

Counting a big site's chapters (1.5 million rows) or summing its pages'
bytes is not something every status refresh can pay for, so the figures are
memoised in the cache (CRAWLER_SOURCE_STATS_SECS) and the dashboard shows
when they were taken. The chapter counts walk `chapter_source_state_idx`
(an index-only scan).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Sum
from django.utils import timezone

from catalog import disk
from catalog.models import Chapter, Page, Source
from crawler import download_policy
from crawler.passes import disk_guard

CACHE_KEY = "crawler:source-stats"


def download_state(sync_state: str, policy: str) -> str:
    """Which dashboard column a chapter in `sync_state` counts in, for a source with `policy`."""
    if sync_state == Chapter.SyncState.DONE:
        return "downloaded"
    if sync_state == Chapter.SyncState.FAILED:
        return "failed"
    if sync_state == Chapter.SyncState.NEW and policy == download_policy.FOLLOWED:
        return "not_wanted"
    return "waiting"


def chapter_downloads(source_ids: Iterable[str] | None = None) -> dict[str, dict[str, int]]:
    """`{source_id: {downloaded, waiting, not_wanted, failed}}` of live chapters, counted now."""
    return _chapter_downloads(_policies(source_ids))


def _policies(source_ids: Iterable[str] | None = None) -> dict[str, str]:
    sources = Source.objects.all() if source_ids is None else Source.objects.filter(id__in=list(source_ids))
    return {source.id: download_policy.policy_of(source) for source in sources}


def _chapter_downloads(policies: dict[str, str]) -> dict[str, dict[str, int]]:
    counts = {source_id: dict.fromkeys(("downloaded", "waiting", "not_wanted", "failed"), 0) for source_id in policies}
    rows = (
        Chapter.objects.filter(source_id__in=list(policies), dropped_at__isnull=True)
        .values_list("source_id", "sync_state")
        .annotate(n=Count("*"))
        .order_by()
    )
    for source_id, sync_state, n in rows:
        counts[source_id][download_state(sync_state, policies[source_id])] += n
    return counts


def storage_by_source() -> dict[str, int]:
    """Bytes of stored pages per source."""
    rows = Page.objects.values_list("chapter__source_id").annotate(total=Sum("bytes")).order_by()
    return {source_id: total or 0 for source_id, total in rows}


def source_stats() -> dict[str, Any]:
    """What the dashboard's sources table shows, memoised for CRAWLER_SOURCE_STATS_SECS."""
    cached = cache.get(CACHE_KEY)
    if cached is not None:
        return cached
    policies = _policies()
    downloads = _chapter_downloads(policies)
    stored = storage_by_source()
    stats = {
        "counted_at": timezone.now().isoformat(),
        "sources": [
            {
                "source_id": source_id,
                "download": policies[source_id],
                **counts,
                "stored_bytes": stored.get(source_id, 0),
            }
            for source_id, counts in sorted(downloads.items())
        ],
    }
    if settings.STORAGE_BACKEND == "filesystem":
        space = disk.media_space(str(settings.MEDIA_ROOT))
        floor, set_by = disk_guard.current_floor()
        stats["disk"] = {
            "free_bytes": space.free,
            "total_bytes": space.total,
            "floor_bytes": floor.of(space.total),
            "floor_set_by": set_by,
        }
    elif settings.CRAWLER_S3_QUOTA:
        quota, (floor, set_by) = settings.CRAWLER_S3_QUOTA, disk_guard.current_floor()
        stats["s3_quota"] = {
            "quota_bytes": quota,
            "stored_bytes": sum(stored.values()),
            "floor_bytes": floor.of(quota),
            "floor_set_by": set_by,
        }
    cache.set(CACHE_KEY, stats, settings.CRAWLER_SOURCE_STATS_SECS)
    return stats
