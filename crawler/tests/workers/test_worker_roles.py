"""What each worker role leases, and the shared metadata-pass schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from analysis.worker import analyze_worker
from catalog.models import Source
from crawler.payloads import MetadataPass
from crawler.workers.roles import CrawlHooks, crawl_worker, enqueue_due_metadata_passes, metadata_pass_due
from jobs.models import Job, JobState

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("last", "now", "due"),
    [
        (None, NOW, True),
        (NOW, NOW, False),
        (NOW - HOUR + timedelta(seconds=1), NOW, False),
        (NOW - HOUR, NOW, True),
        (NOW - 5 * HOUR, NOW, True),
    ],
)
def test_metadata_pass_is_due_once_per_interval(last, now, due):
    assert metadata_pass_due(last, HOUR, now) is due


def test_crawl_worker_leases_every_crawl_kind_and_never_analysis():
    worker = crawl_worker(concurrency=3, schedule=False)
    assert sorted(worker.config.kinds) == [
        "enqueue_downloads",
        "metadata_pass",
        "reconcile",
        "sync_chapter_content",
        "sync_chapter_list",
        "sync_manga",
        "verify_library",
    ]
    assert worker.config.concurrency == 3
    assert isinstance(worker.config.hooks, CrawlHooks)  # every crawl kind waits out its source's expired session
    assert [duty.name for duty in worker.config.periodic] == ["reap_done"]
    assert [duty.name for duty in crawl_worker().config.periodic] == ["reap_done", "schedule_metadata_pass"]


def test_analyze_worker_leases_only_analyze_page():
    assert analyze_worker().config.kinds == ["analyze_page"]


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_schedule_enqueues_one_pass_per_enabled_source_once_per_interval(settings):
    settings.CRAWLER_METADATA_INTERVAL = 3600
    Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url="http://127.0.0.1:1")
    Source.objects.create(id="off", name="Off", base_url="http://127.0.0.1:2", enabled=False)
    now = timezone.now()

    assert enqueue_due_metadata_passes(now) == now + HOUR
    assert list(Job.objects.values_list("kind", "payload__source_id")) == [(MetadataPass.kind, "demo")]

    # Another worker checking a minute later: not due, nothing enqueued.
    assert enqueue_due_metadata_passes(now + timedelta(minutes=1)) == now + HOUR
    assert Job.objects.count() == 1

    # Due again while the first pass is still pending: the dedup key skips it.
    enqueue_due_metadata_passes(now + HOUR)
    assert Job.objects.filter(state=JobState.PENDING).count() == 1
