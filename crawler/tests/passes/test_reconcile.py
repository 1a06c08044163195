"""Reconcile pass: strict set-diff against MangaSource, job-state skips, batched queries."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Manga, MangaSource, Source
from crawler.passes import reconcile
from crawler.passes.reconcile import run_reconcile
from crawler.payloads import SyncManga
from jobs.errors import JobCancelled
from jobs.models import Job
from jobs.queue import enqueue, lease
from jobs.retry import ack_failed
from sources.base import SourceMangaRef

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


class ListSource:
    """A catalog held in memory, served `per_page` refs per list page (newest first)."""

    source_id = "shelf"

    def __init__(self, keys, per_page=5):
        self.refs = [SourceMangaRef(key=k, url=f"http://shelf.test/manga/{k}", title=f"Title {k}") for k in keys]
        self.per_page = per_page
        self.pages_served = 0

    def list_page(self, n):
        self.pages_served += 1
        start = (n - 1) * self.per_page
        return self.refs[start : start + self.per_page], start + self.per_page < len(self.refs)

    def manga_detail(self, ref):
        raise AssertionError("reconcile must not visit detail pages")

    def chapter_pages(self, chapter):
        raise AssertionError("reconcile must not visit chapters")

    def open_image(self, url):
        raise AssertionError("reconcile must not fetch images")

    def close(self):
        pass


@pytest.fixture
def source_row():
    return Source.objects.create(id="shelf", name="Shelf", kind="html", base_url="http://shelf.test/")


def store(source_row, *keys, dropped=False):
    for key in keys:
        manga = Manga.objects.create(title=f"Title {key}")
        MangaSource.objects.create(
            manga=manga, source=source_row, source_manga_key=key, dropped_at="2026-01-01T00:00:00Z" if dropped else None
        )


def queued_sync_manga():
    return {j.payload["source_manga_key"]: j.payload for j in Job.objects.filter(kind="sync_manga", state="pending")}


def test_reconcile_enqueues_each_missing_manga_with_url_and_title(source_row):
    store(source_row, "m1", "m3")
    stats = run_reconcile(source_row, ListSource(["m1", "m2", "m3", "m4"], per_page=3))

    assert (stats.walked, stats.missing, stats.enqueued, stats.skipped) == (4, 2, 2, 0)
    jobs = queued_sync_manga()
    assert set(jobs) == {"m2", "m4"}
    assert jobs["m2"]["url"] == "http://shelf.test/manga/m2"
    assert jobs["m2"]["title"] == "Title m2"
    assert jobs["m2"]["source_id"] == "shelf"


def test_reconcile_counts_dropped_manga_sources_as_present(source_row):
    store(source_row, "gone", dropped=True)
    stats = run_reconcile(source_row, ListSource(["gone", "new"]))

    assert stats.enqueued == 1
    assert set(queued_sync_manga()) == {"new"}


def test_reconcile_only_matches_keys_of_its_own_source(source_row):
    other = Source.objects.create(id="other", name="Other", kind="html", base_url="http://other.test/")
    store(other, "m1")
    run_reconcile(source_row, ListSource(["m1"]))
    assert set(queued_sync_manga()) == {"m1"}


@pytest.mark.parametrize("state", ["pending", "running", "dead"])
def test_reconcile_skips_keys_with_a_pending_running_or_dead_sync_manga_job(source_row, state):
    enqueue(SyncManga(source_id="shelf", source_manga_key="m1", url="u", title="t"), max_attempts=1)
    if state != "pending":
        leased = lease(["sync_manga"], 1, timedelta(minutes=5))[0]
        if state == "dead":
            ack_failed(leased, "detail page answered 404")
    assert Job.objects.get().state == state

    stats = run_reconcile(source_row, ListSource(["m1", "m2"]))

    assert (stats.missing, stats.enqueued, stats.skipped) == (2, 1, 1)
    assert Job.objects.filter(dedup_key="sync_manga:shelf:m1").count() == 1
    assert Job.objects.filter(dedup_key="sync_manga:shelf:m2", state="pending").count() == 1


@pytest.mark.parametrize("state", ["done", "failed"])
def test_reconcile_requeues_keys_whose_earlier_job_is_done_or_failed(source_row, state):
    enqueue(SyncManga(source_id="shelf", source_manga_key="m1", url="", title=""))
    Job.objects.update(state=state)
    stats = run_reconcile(source_row, ListSource(["m1"]))
    assert stats.enqueued == 1


def test_reconcile_a_second_time_enqueues_nothing_new(source_row):
    run_reconcile(source_row, ListSource(["m1", "m2"]))
    stats = run_reconcile(source_row, ListSource(["m1", "m2"]))
    assert (stats.enqueued, stats.skipped) == (0, 2)
    assert Job.objects.count() == 2


def test_reconcile_checks_keys_in_batches_not_one_query_per_ref(source_row, monkeypatch):
    monkeypatch.setattr(reconcile, "BATCH_SIZE", 100)
    keys = [f"m{i}" for i in range(250)]
    store(source_row, *keys)
    with CaptureQueriesContext(connection) as queries:
        stats = run_reconcile(source_row, ListSource(keys, per_page=40))
    assert stats.walked == 250
    # One MangaSource lookup per batch of 100 keys, nothing else when none is missing.
    assert len(queries) == 3


def test_reconcile_reports_progress_per_list_page_and_at_the_end(source_row):
    seen = []
    run_reconcile(
        source_row, ListSource(["a", "b", "c", "d", "e"], per_page=2), progress=lambda w, e: seen.append((w, e))
    )
    assert seen[-1] == (5, 5)
    assert [w for w, _ in seen] == [2, 4, 5]


def test_reconcile_stops_when_cancelled(source_row):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(JobCancelled):
        run_reconcile(source_row, ListSource(["a"]), cancel=cancel)
    assert Job.objects.count() == 0


class RepeatingSource(ListSource):
    """A list URL that ignores its page number: page 1 again and again, always "has next"."""

    def list_page(self, n):
        self.pages_served += 1
        return self.refs[: self.per_page], True


def test_reconcile_stops_when_the_list_stops_advancing(source_row):
    source = RepeatingSource(["a", "b", "c"], per_page=2)
    stats = run_reconcile(source_row, source)
    assert source.pages_served == 2
    assert stats.enqueued == 2


def test_reconcile_stops_at_an_empty_list_page_even_if_it_claims_more(source_row):
    class EmptyTail(ListSource):
        def list_page(self, n):
            refs, _ = super().list_page(n)
            return refs, True

    source = EmptyTail(["a", "b", "c"], per_page=2)
    stats = run_reconcile(source_row, source)
    assert (source.pages_served, stats.walked, stats.enqueued) == (3, 3, 3)
