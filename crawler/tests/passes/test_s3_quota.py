"""The S3 quota: on object storage CRAWLER_S3_QUOTA less the catalog's stored page bytes is the room the disk guard keeps."""

from __future__ import annotations

import pytest

from catalog.disk import Floor, parse_quota
from testsupport import api_factories as f

GIB = 1024**3


def test_parse_quota_reads_a_size_and_refuses_a_share():
    assert parse_quota("500GiB") == 500 * GIB
    assert parse_quota("2TB") == 2 * 1000**4
    assert parse_quota("0") == 0
    with pytest.raises(ValueError, match="a quota is a size with a unit"):
        parse_quota("5%")
    with pytest.raises(ValueError, match="not a size"):
        parse_quota("lots")


@pytest.fixture
def s3_quota(settings):
    settings.STORAGE_BACKEND = "s3"
    settings.CRAWLER_SOURCE_STATS_SECS = 0  # recount on every check
    settings.CRAWLER_S3_QUOTA = 1000
    settings.CRAWLER_MIN_FREE_DISK = Floor(bytes=100)
    return settings


def stored(n_bytes: int) -> None:
    """A stored page of `n_bytes` by the catalog's count (the guard never lists the bucket)."""
    src = f.source("older", enabled=False)
    page = f.page(f.chapter(f.manga("Stored", src=src), 1, src=src))
    type(page).objects.filter(pk=page.pk).update(bytes=n_bytes)


@pytest.mark.sqlite_ok
def test_the_quota_pauses_downloads_when_its_room_is_under_the_floor_or_it_is_reached(s3_quota, db):
    from catalog.models import Page
    from crawler.passes.disk_guard import storage_paused

    assert storage_paused() is None  # nothing stored: 1,000 B of room, floor 100 B
    stored(950)
    assert storage_paused() == (
        "room left in the quota 50 B on S3 storage (CRAWLER_S3_QUOTA 1000 B) is under CRAWLER_MIN_FREE_DISK "
        "(100 B: 100 B); page downloads paused"
    )
    Page.objects.update(bytes=1200)
    s3_quota.CRAWLER_MIN_FREE_DISK = Floor()  # no floor: a reached quota still pauses
    assert storage_paused() == (
        "1.2 KiB of stored pages reach CRAWLER_S3_QUOTA on S3 storage (CRAWLER_S3_QUOTA 1000 B); page downloads paused"
    )
    s3_quota.CRAWLER_S3_QUOTA = 0  # no quota: object storage has nothing to guard
    assert storage_paused() is None


@pytest.mark.sqlite_ok
def test_the_status_and_the_dashboard_figures_say_why_and_show_the_quota(s3_quota, db):
    from django.core.cache import cache

    from console.status.compose import storage_status
    from console.status.source_stats import CACHE_KEY, source_stats

    stored(950)
    status = storage_status([])
    assert status["downloads_paused"] and "CRAWLER_S3_QUOTA" in status["reason"]
    cache.delete(CACHE_KEY)
    figures = source_stats()
    assert figures["s3_quota"] == {
        "quota_bytes": 1000,
        "stored_bytes": 950,
        "floor_bytes": 100,
        "floor_set_by": "CRAWLER_MIN_FREE_DISK",
    }
    assert "disk" not in figures


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    from testsupport.worker_processes import worker_pool

    yield from worker_pool(child_env, manage_cmd, tmp_path)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_a_reached_quota_pauses_a_real_worker_on_s3_with_nothing_failed_and_room_made_resumes_it(
    demo_site_factory, workers, settings, s3_storage
):
    from catalog.models import Page
    from jobs.models import Job
    from testsupport.worker_processes import demo_downloads_queued, storage_paused_flag, wait_until

    settings.ANALYSIS_ENABLED = False
    content = demo_downloads_queued(demo_site_factory)
    stored(GIB)  # an older chapter's page, by the catalog's count: the 1 GiB quota is full
    old_pages = set(Page.objects.values_list("pk", flat=True))
    objects_before = s3_storage.keys()

    worker = workers.start(
        **s3_storage.env(), CRAWLER_S3_QUOTA="1GiB", CRAWLER_MIN_FREE_DISK="1MiB", CRAWLER_SOURCE_STATS_SECS="0"
    )
    flag = wait_until(lambda: storage_paused_flag(worker.pid), what="the worker to report paused downloads")
    assert "1.0 GiB of stored pages reach CRAWLER_S3_QUOTA" in flag
    wait_until(lambda: "page downloads paused" in worker.log(), what="the pause in the worker's log")
    assert list(content.values_list("state", "attempts")) == [("pending", 0), ("pending", 0)]
    assert s3_storage.keys() == objects_before  # no page went up while paused

    Page.objects.filter(pk__in=old_pages).delete()  # the operator makes room: the catalog's count drops
    wait_until(lambda: set(content.values_list("state", flat=True)) == {"done"}, 120, what="the downloads")
    assert set(content.values_list("attempts", flat=True)) == {1}
    new_pages = Page.objects.exclude(pk__in=old_pages)
    assert new_pages.count() == 6
    keys = set(s3_storage.keys())
    assert all(f"media/{page.image.name}" in keys for page in new_pages)  # the pages went to the bucket
    assert not Job.objects.filter(state__in=["dead", "failed"]).exists()
    assert "resuming page downloads" in worker.log()
    assert worker.terminate() == 0
