"""Crawl job handlers and chapter download against the live demo site and PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from PIL import Image

from catalog import storage
from catalog.copies import copy_name
from catalog.models import Chapter, Manga, MangaSource, Page
from crawler.passes import chapter_download
from crawler.passes.chapter_download import page_directory
from crawler.payloads import MetadataPass, Reconcile, SyncChapterList, SyncManga
from crawler.workers.handlers import JobContext
from jobs import kinds
from jobs.errors import JobCancelled
from jobs.models import Job
from jobs.queue import enqueue, lease
from jobs.worker.outcomes import Disposition, disposition
from jobs.worker.status.handle import StatusHandle
from sources.errors import CrawlerError, ImageRefused, SessionExpired

pytestmark = pytest.mark.django_db

LEASE = timedelta(minutes=5)


def run_job(lease_, status=None, cancel=None):
    ctx = JobContext(lease=lease_, status=status or StatusHandle(), cancel=cancel or threading.Event())
    kinds.registered()[lease_.kind].handler(lease_.payload, ctx)
    return ctx


def lease_one(kind):
    (leased,) = lease([kind], 1, LEASE)
    return leased


def sync_manga(site, key):
    ref = site.manga(key)
    enqueue(SyncManga(source_id="demo", source_manga_key=key, url=site.url(f"/manga/{key}"), title=ref.title))
    run_job(lease_one("sync_manga"))
    return MangaSource.objects.get(source_manga_key=key).manga


def stored_files(chapter):
    try:
        return sorted(default_storage.listdir(page_directory(chapter.id))[1])
    except FileNotFoundError:
        return []


@pytest.fixture
def manga(demo_site, demo_source):
    return sync_manga(demo_site, "manga-0004")


def test_sync_manga_handler_runs_the_pipeline_for_its_ref(demo_site, demo_source):
    manga = sync_manga(demo_site, "manga-0007")

    site_manga = demo_site.manga("manga-0007")
    assert manga.title == site_manga.title
    assert manga.cover_state == "stored"
    assert Chapter.objects.filter(manga=manga).count() == len(site_manga.chapters)
    assert Job.objects.filter(kind="sync_chapter_content").count() == len(site_manga.chapters)
    assert Job.objects.get(kind="sync_manga").state == "running", "acking is the worker loop's business"


def test_sync_chapter_list_handler_inserts_a_new_chapter_and_drops_a_removed_one(demo_site, manga):
    site_manga = demo_site.manga("manga-0004")
    removed = site_manga.chapters[0].key
    demo_site.remove_chapter("manga-0004", removed)
    added = demo_site.add_chapter("manga-0004")
    Chapter.objects.update(sync_state="done")
    Job.objects.all().delete()

    enqueue(SyncChapterList(source_id="demo", manga_id=manga.id, source_manga_key="manga-0004"))
    run_job(lease_one("sync_chapter_list"))

    assert Chapter.objects.get(source_chapter_key=removed).dropped_at is not None
    new = Chapter.objects.get(source_chapter_key=added)
    assert list(Job.objects.filter(kind="sync_chapter_content").values_list("chapter_id", flat=True)) == [new.id]


@pytest.mark.sqlite_ok
def test_download_chapter_stores_exactly_its_pages_with_their_metadata(demo_site, manga, settings):
    settings.ANALYSIS_ENABLED = False
    chapter = Chapter.objects.filter(manga=manga).order_by("number").first()
    expected_pages = demo_site.manga("manga-0004").chapter(chapter.source_chapter_key).pages
    status = StatusHandle()
    progress = []

    def watch():
        snap = status.snapshot()
        progress.extend((c["pages_done"], c["pages_total"]) for c in snap.active_chapters)

    status.add_listener(watch)
    job = lease_one("sync_chapter_content")
    assert job.payload.chapter_id == chapter.id, "lowest chapter number first"

    run_job(job, status=status)

    chapter.refresh_from_db()
    assert (chapter.sync_state, chapter.page_count) == ("done", expected_pages)
    pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
    assert [p.index for p in pages] == list(range(expected_pages))
    for page in pages:
        data = default_storage.open(page.image.name).read()
        with Image.open(io.BytesIO(data)) as image:
            assert (page.width, page.height) == image.size
            assert page.content_type == Image.MIME[image.format]
        assert page.bytes == len(data)
        assert page.sha256 == hashlib.sha256(data).hexdigest()
    assert stored_files(chapter) == sorted(os.path.basename(p.image.name) for p in pages)
    # Shown as soon as it starts, then the total once the page list is read, then one tick per page.
    assert progress == [(0, None)] + [(done, expected_pages) for done in range(expected_pages + 1)]
    assert status.snapshot().active_chapters == [], "the chapter leaves the live status when done"


@pytest.mark.sqlite_ok
def test_rerun_after_an_interrupted_download_ends_with_exactly_its_pages_and_no_orphans(demo_site, manga, settings):
    settings.ANALYSIS_ENABLED = False
    job = lease_one("sync_chapter_content")
    chapter = Chapter.objects.get(id=job.payload.chapter_id)
    run_job(job)
    complete = {p.index: p.sha256 for p in Page.objects.filter(chapter=chapter)}
    first, last = Page.objects.filter(chapter=chapter).order_by("index")[:: chapter.page_count - 1]
    # A reader viewed both pages scaled; the last one's row then goes (a re-download gives it a new id).
    kept_copy, stale_copy = (copy_name(p.image.name, "page", 800, "jpg") for p in (first, last))
    for name in (kept_copy, stale_copy):
        default_storage.save(name, ContentFile(b"a scaled copy"))
    # Rewind to what a kill -9 mid-download leaves: the last page's file stored but
    # its row never written, plus a temp file cut short mid-write.
    orphan = last.image.name
    last.delete()
    directory = default_storage.path(page_directory(chapter.id))
    with open(os.path.join(directory, ".incoming-dead.part"), "wb") as partial:
        partial.write(b"\x89PNG\r\n\x1a\n half")
    Chapter.objects.filter(id=chapter.id).update(sync_state="downloading", page_count=0)

    run_job(job)  # the same job again, as after the worker died and the lease came back

    chapter.refresh_from_db()
    pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
    assert {p.index: p.sha256 for p in pages} == complete
    assert chapter.sync_state == "done" and chapter.page_count == len(complete)
    assert stored_files(chapter) == sorted(os.path.basename(p.image.name) for p in pages)
    assert not default_storage.exists(orphan)
    assert default_storage.exists(kept_copy) and not default_storage.exists(stale_copy)


def test_download_queues_analysis_for_every_stored_page(demo_site, manga, settings):
    settings.ANALYSIS_ENABLED = True
    job = lease_one("sync_chapter_content")
    run_job(job)
    page_ids = set(Page.objects.filter(chapter_id=job.payload.chapter_id).values_list("id", flat=True))
    assert page_ids
    assert set(Job.objects.filter(kind="analyze_page").values_list("page_id", flat=True)) == page_ids


def test_download_queues_no_analysis_when_disabled(demo_site, manga, settings):
    settings.ANALYSIS_ENABLED = False
    run_job(lease_one("sync_chapter_content"))
    assert not Job.objects.filter(kind="analyze_page").exists()


def test_a_broken_page_image_fails_the_job_and_leaves_no_file(demo_site, manga):
    demo_site.faults.broken_image = True
    job = lease_one("sync_chapter_content")

    with pytest.raises(ImageRefused, match=r"http://127\.0\.0\.1:\d+/img/pages/\S+: the bytes start like an image"):
        run_job(job)

    chapter = Chapter.objects.get(id=job.payload.chapter_id)
    assert chapter.sync_state == "failed"
    assert not Page.objects.filter(chapter=chapter).exists()
    assert stored_files(chapter) == []


@pytest.mark.parametrize("fault", ["broken_image", "html_as_image"])
def test_a_refused_page_image_is_a_permanent_error_so_its_job_dies_at_once_naming_the_url(demo_site, manga, fault):
    setattr(demo_site.faults, fault, True)
    job = lease_one("sync_chapter_content")
    with pytest.raises(ImageRefused) as caught:
        run_job(job)
    assert disposition(caught.value) is Disposition.DEAD
    assert f"{demo_site.base_url}/img/pages/" in str(caught.value)


def test_an_html_page_served_as_an_image_fails_the_job(demo_site, manga):
    demo_site.faults.html_as_image = True
    job = lease_one("sync_chapter_content")
    with pytest.raises(ImageRefused, match="text/html"):
        run_job(job)
    assert stored_files(Chapter.objects.get(id=job.payload.chapter_id)) == []


def test_the_login_wall_raises_session_expired_from_the_content_handler(demo_site, manga):
    demo_site.faults.login_wall = True
    job = lease_one("sync_chapter_content")

    with pytest.raises(SessionExpired):
        run_job(job)

    assert Chapter.objects.get(id=job.payload.chapter_id).sync_state == "queued", "released work is queued again"


def test_the_login_wall_raises_session_expired_from_the_sync_manga_handler(demo_site, demo_source):
    demo_site.faults.login_wall = True
    enqueue(
        SyncManga(source_id="demo", source_manga_key="manga-0001", url=demo_site.url("/manga/manga-0001"), title="")
    )
    with pytest.raises(SessionExpired):
        run_job(lease_one("sync_manga"))
    assert not Manga.objects.exists()


def test_a_cancelled_download_stops_between_pages_and_goes_back_to_queued(demo_site, manga):
    cancel = threading.Event()
    cancel.set()
    job = lease_one("sync_chapter_content")
    with pytest.raises(JobCancelled):
        run_job(job, cancel=cancel)
    chapter = Chapter.objects.get(id=job.payload.chapter_id)
    assert chapter.sync_state == "queued"
    assert not Page.objects.filter(chapter=chapter).exists()


def test_page_rows_are_written_a_batch_at_a_time(demo_site, manga, settings, monkeypatch):
    settings.ANALYSIS_ENABLED = False
    monkeypatch.setattr(chapter_download, "PAGE_ROWS_PER_INSERT", 2)
    job = lease_one("sync_chapter_content")
    with CaptureQueriesContext(connection) as queries:
        run_job(job)
    chapter = Chapter.objects.get(id=job.payload.chapter_id)
    inserts = [q["sql"] for q in queries if q["sql"].startswith('INSERT INTO "catalog_page"')]
    assert chapter.page_count >= 2
    assert len(inserts) == (chapter.page_count + 1) // 2  # two rows an INSERT, not one
    assert sorted(Page.objects.filter(chapter=chapter).values_list("index", flat=True)) == list(
        range(chapter.page_count)
    )


def test_a_chapter_reads_its_existing_page_rows_once(demo_site, manga, settings):
    """The orphan sweep and the pages to skip come from one read of the chapter's rows, not two."""
    settings.ANALYSIS_ENABLED = False
    job = lease_one("sync_chapter_content")
    with CaptureQueriesContext(connection) as queries:
        run_job(job)
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and 'FROM "catalog_page"' in q["sql"]]
    assert len(reads) == 1


def test_a_row_batch_is_made_durable_in_one_filesystem_sync_before_its_rows(demo_site, manga, settings, monkeypatch):
    """No fsync a page: each batch of rows is preceded by one syncfs of the chapter's directory, which holds the
    batch's files then (bytes and names)."""
    settings.ANALYSIS_ENABLED = False
    monkeypatch.setattr(chapter_download, "PAGE_ROWS_PER_INSERT", 2)
    job = lease_one("sync_chapter_content")
    chapter_dir = os.path.join(settings.MEDIA_ROOT, page_directory(job.payload.chapter_id))
    events: list[str] = []
    real_fsync, real_syncfs, real_insert = os.fsync, storage._syncfs, chapter_download.insert_page_rows

    def fsync(fd: int) -> None:
        events.append(f"fsync {os.path.realpath(f'/proc/self/fd/{fd}')}")
        real_fsync(fd)

    def syncfs(fd: int) -> None:
        assert os.path.realpath(f"/proc/self/fd/{fd}") == chapter_dir
        events.append(f"syncfs {len(os.listdir(chapter_dir))}")
        real_syncfs(fd)

    def insert_page_rows(pages):
        events.append(f"rows {len(pages)}")
        return real_insert(pages)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(storage, "_syncfs", syncfs)
    monkeypatch.setattr(chapter_download, "insert_page_rows", insert_page_rows)
    run_job(job)
    count = Chapter.objects.get(id=job.payload.chapter_id).page_count
    batches = [min(2, count - start) for start in range(0, count, 2)]
    expected = []
    for number, size in enumerate(batches):
        expected += [f"syncfs {sum(batches[: number + 1])}", f"rows {size}"]
    assert events == expected


def test_pages_stored_before_a_cancel_keep_their_rows(demo_site, manga, settings, monkeypatch):
    settings.ANALYSIS_ENABLED = False
    monkeypatch.setattr(chapter_download, "PAGE_ROWS_PER_INSERT", 10)
    cancel = threading.Event()
    status = StatusHandle()

    def cancel_after_one() -> None:
        if any(c["pages_done"] == 1 for c in status.snapshot().active_chapters):
            cancel.set()

    status.add_listener(cancel_after_one)
    job = lease_one("sync_chapter_content")
    with pytest.raises(JobCancelled):
        run_job(job, status=status, cancel=cancel)
    chapter = Chapter.objects.get(id=job.payload.chapter_id)
    pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
    assert [p.index for p in pages] == [0]  # stored, then recorded though the batch was not full
    assert stored_files(chapter) == sorted(os.path.basename(p.image.name) for p in pages)


def test_a_job_for_a_disabled_source_does_nothing(demo_site, demo_source):
    demo_source.enabled = False
    demo_source.save()
    enqueue(SyncManga(source_id="demo", source_manga_key="manga-0001", url="", title=""))
    run_job(lease_one("sync_manga"))
    assert not Manga.objects.exists()
    assert demo_site.hits("/manga/") == []


def test_a_sync_manga_job_without_url_or_stored_link_fails_with_a_clear_error(demo_site, demo_source):
    enqueue(SyncManga(source_id="demo", source_manga_key="manga-0001", url="", title=""))
    with pytest.raises(CrawlerError, match="has no url"):
        run_job(lease_one("sync_manga"))


@pytest.mark.django_db(transaction=True)
def test_an_old_sync_manga_job_takes_its_url_from_the_stored_link_in_the_migration_then_runs(
    demo_site, demo_source, migrator
):
    link = MangaSource.objects.get(manga=sync_manga(demo_site, "manga-0001"))
    demo_site.update_manga("manga-0001", title="Renamed")
    Job.objects.all().delete()
    old_job = migrator([("jobs", "0005_job_source_column")]).get_model("jobs", "Job")
    now = timezone.now()

    def enqueued_before_url_and_title(key):
        return old_job.objects.create(
            kind="sync_manga",
            payload={"kind": "sync_manga", "source_id": "demo", "source_manga_key": key},
            dedup_key=f"sync_manga:demo:{key}",
            source_id="demo",
            scheduled_at=now,
            created_at=now,
            updated_at=now,
        ).id

    linked, unlinked = enqueued_before_url_and_title("manga-0001"), enqueued_before_url_and_title("never-stored")

    migrator([("jobs", "0006_sync_manga_payloads_carry_url_and_title")])

    assert Job.objects.get(id=linked).payload["url"] == link.url
    assert Job.objects.get(id=linked).payload["title"] == link.manga.title
    assert {k: Job.objects.get(id=unlinked).payload[k] for k in ("url", "title")} == {"url": "", "title": ""}
    migrator(MigrationExecutor(connection).loader.graph.leaf_nodes())
    Job.objects.filter(id=unlinked).delete()
    run_job(lease_one("sync_manga"))
    assert Manga.objects.get().title == "Renamed"


def test_reconcile_handler_reports_reconciling_progress_and_ends_idle(demo_site, demo_source):
    status = StatusHandle()
    phases = []
    status.add_listener(lambda: phases.append(status.snapshot().phase))
    enqueue(Reconcile(source_id="demo"))

    run_job(lease_one("reconcile"), status=status)

    reconciling = [(p["walked"], p["enqueued"]) for p in phases if p["state"] == "reconciling"]
    # Walked moves per list page; enqueued moves when a batch of keys is checked (here: at the end).
    assert reconciling == [(10, 0), (12, 12)]
    assert phases[-1]["state"] == "idle"
    assert Job.objects.filter(kind="sync_manga", state="pending").count() == 12


def test_metadata_pass_handler_runs_a_pass_over_its_source(demo_site, demo_source):
    enqueue(MetadataPass(source_id="demo"))
    run_job(lease_one("metadata_pass"))
    assert MangaSource.objects.count() == 12
