"""Real crawl worker processes against real PostgreSQL and the live demo site.

Each test crawls a tiny catalog whose chapter download is made slow by the
demo site's `slow_secs` fault, so "mid-chapter" is a state the test can wait
for (a Page row exists, the job is running) instead of a guess.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from catalog.models import Chapter, Page
from console.status.compose import GONE_AFTER, compose_status
from crawler import state_store
from crawler.passes.metadata_pass import run_metadata_pass
from jobs import retry
from jobs.models import Job, JobState, WorkerStatus
from jobs.worker.status.handle import StatusHandle
from testsupport.worker_processes import stored_files, wait_until, worker_pool

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    yield from worker_pool(child_env, manage_cmd, tmp_path)


CHAPTER_JOB = "sync_chapter_content"


@pytest.fixture
def one_chapter(demo_site_factory, settings):
    """One manga with one 6-page chapter crawled to the point where its content job is queued."""
    from catalog.models import Source

    settings.ANALYSIS_ENABLED = False
    site = demo_site_factory(mangas=1, chapters=(1, 1), pages=(6, 6))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    chapter = Chapter.objects.get()
    job = Job.objects.get(kind=CHAPTER_JOB)
    return site, chapter, job


def page_stored(chapter):
    # The file, not the row: rows are written a batch at a time (chapter_download.PAGE_ROWS_PER_INSERT).
    return lambda: any(not name.rsplit("/", 1)[1].startswith(".") for name in stored_files(chapter.id))


def worker_mid_chapter(workers, site, chapter, slow_secs: float = 0.4):
    """A crawl worker in the middle of `chapter`: one page stored, the rest coming slowly."""
    site.faults.slow_secs = slow_secs
    worker = workers.start()
    wait_until(page_stored(chapter), what="a first page stored")
    return worker


def job_row(job) -> Job:
    return Job.objects.get(id=job.id)


def assert_chapter_complete(chapter, expected_pages: int) -> None:
    chapter.refresh_from_db()
    pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
    assert chapter.sync_state == Chapter.SyncState.DONE
    assert [p.index for p in pages] == list(range(expected_pages))
    # No orphan files: the directory holds exactly the stored pages.
    assert stored_files(chapter.id) == {p.image.name for p in pages}


def test_kill9_mid_chapter_is_reclaimed_at_boot_and_completed_with_the_attempt_refunded(one_chapter, workers):
    site, chapter, job = one_chapter
    first = worker_mid_chapter(workers, site, chapter)
    first.kill9()

    row = job_row(job)
    assert (row.state, row.attempts) == (JobState.RUNNING, 1)
    # The killed worker never stamped a clean stop: once its heartbeat is stale it shows as gone.
    later = timezone.now() + GONE_AFTER + timedelta(seconds=1)
    assert [w["state"] for w in compose_status(now=later)["workers"] if w["pid"] == first.pid] == ["gone"]
    wait_until(lambda: job_row(job).leased_until < timezone.now(), what="the dead worker's lease to expire")

    site.faults.slow_secs = 0
    second = workers.start("--drain")
    assert second.wait() == 0
    assert "reclaimed 1 orphaned job" in second.log()

    row = job_row(job)
    # Reclaim refunded the killed attempt; the successful run is attempt 1.
    assert (row.state, row.attempts) == (JobState.DONE, 1)
    assert_chapter_complete(chapter, 6)


def test_shutdown_mid_dispatch_releases_lease_without_burning_attempt(one_chapter, workers):
    site, chapter, job = one_chapter
    worker = worker_mid_chapter(workers, site, chapter)

    assert worker.terminate(timeout=15) == 0

    row = job_row(job)
    assert (row.state, row.attempts, row.lease_generation) == (JobState.PENDING, 0, 2)
    assert row.leased_until is None
    status_row = WorkerStatus.objects.get(pid=worker.pid)
    assert status_row.stopped_at is not None
    assert status_row.active_chapters == []
    chapter.refresh_from_db()
    assert chapter.sync_state == Chapter.SyncState.QUEUED  # ready for whoever leases it next


def test_job_slower_than_the_timeout_is_acked_failed_then_retried_after_backoff(one_chapter, workers):
    site, chapter, job = one_chapter
    site.faults.slow_secs = 0.6
    before = timezone.now()
    assert workers.start("--once", JOBS_JOB_TIMEOUT_SECS="2").wait() == 0

    row = job_row(job)
    assert (row.state, row.attempts) == (JobState.PENDING, 1)
    assert row.last_error == "timed out after 2 s"
    assert row.scheduled_at >= before + timedelta(seconds=45)  # 60 s backoff, jitter >= 0.8x
    chapter.refresh_from_db()
    assert chapter.sync_state == Chapter.SyncState.QUEUED  # the cancelled handler unwound

    # The backoff elapses (moved, not slept); the retry runs against a healthy site.
    Job.objects.filter(id=job.id).update(scheduled_at=timezone.now())
    site.faults.slow_secs = 0
    assert workers.start("--drain").wait() == 0
    row = job_row(job)
    assert (row.state, row.attempts) == (JobState.DONE, 2)
    assert_chapter_complete(chapter, 6)


def test_long_healthy_job_is_kept_alive_past_its_lease_and_not_stolen(one_chapter, workers):
    site, chapter, job = one_chapter
    owner = worker_mid_chapter(workers, site, chapter, slow_secs=1.2)  # ~8 s for the chapter: well past the 3 s lease

    # The owner's row shows the chapter with its live page count.
    live = wait_until(
        lambda: WorkerStatus.objects.filter(pid=owner.pid, active_chapters__0__pages_done__gte=1).first(),
        what="the worker row to show pages",
    )
    entry = live.active_chapters[0]
    assert entry["chapter_id"] == str(chapter.id)
    assert entry["pages_total"] == 6

    # Another worker boots (reclaiming orphans) and looks for work meanwhile: it finds none.
    assert workers.start("--drain").wait() == 0

    wait_until(lambda: job_row(job).state == JobState.DONE, what="the chapter to finish")
    row = job_row(job)
    assert (row.attempts, row.lease_generation) == (1, 1)  # never re-leased
    wait_until(
        lambda: WorkerStatus.objects.get(pid=owner.pid).active_chapters == [], what="the row to clear the chapter"
    )
    assert owner.terminate() == 0
    assert_chapter_complete(chapter, 6)


def test_lost_lease_makes_the_worker_drop_the_job_without_acking(one_chapter, workers):
    site, chapter, job = one_chapter
    worker = worker_mid_chapter(workers, site, chapter)

    with transaction.atomic():
        assert retry.release_unowned(job.id)  # an operator's force path bumps the generation
        # Park the row so the worker cannot simply lease it again.
        Job.objects.filter(id=job.id).update(scheduled_at=timezone.now() + timedelta(hours=1))

    wait_until(lambda: "lease lost" in worker.log(), what="the heartbeat to notice")
    wait_until(lambda: WorkerStatus.objects.get(pid=worker.pid).active_chapters == [], what="the handler to unwind")
    assert worker.terminate() == 0

    row = job_row(job)
    # Neither done nor failed: the lost lease's owner never acked.
    assert (row.state, row.attempts, row.lease_generation, row.last_error) == (JobState.PENDING, 0, 2, "")


def test_login_wall_sets_session_expired_releases_and_resumes_after_refresh(one_chapter, workers):
    site, chapter, job = one_chapter
    site.faults.login_wall = True
    worker = workers.start()

    wait_until(lambda: state_store.session_expired("demo"), what="the session-expired flag")
    wait_until(lambda: job_row(job).state == JobState.PENDING, what="the release")
    row = job_row(job)
    assert row.attempts == 0  # released, not failed
    wait_until(
        lambda: WorkerStatus.objects.get(pid=worker.pid).flags.get("session_expired") == ["demo"],
        what="the paused flag in the worker row",
    )

    site.faults.login_wall = False
    state_store.store_session_cookie("demo", "refreshed-by-operator")
    wait_until(lambda: job_row(job).state == JobState.DONE, what="work to resume")
    assert worker.terminate() == 0
    assert job_row(job).attempts == 1
    assert "refreshed-by-operator" not in worker.log()  # a session value is never logged
    assert_chapter_complete(chapter, 6)


def test_source_outage_trips_the_circuit_instead_of_dead_lettering_every_job(demo_site_factory, settings, workers):
    from catalog.models import Source

    settings.ANALYSIS_ENABLED = False
    settings.JOBS_MAX_ATTEMPTS = 1  # without the breaker every job would die on its first failure
    site = demo_site_factory(mangas=1, chapters=(6, 6), pages=(1, 1))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    assert Job.objects.filter(kind=CHAPTER_JOB, state=JobState.PENDING).count() == 6

    site.faults.outage = True
    worker = workers.start(JOBS_CIRCUIT_BREAKER_THRESHOLD="2", JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS="300")
    status_row = wait_until(
        lambda: WorkerStatus.objects.filter(pid=worker.pid, flags__circuit_open_until__isnull=False).first(),
        what="the circuit to open",
    )
    assert status_row.flags["circuit_open_until"]
    assert worker.terminate() == 0

    jobs = Job.objects.filter(kind=CHAPTER_JOB)
    assert jobs.filter(state=JobState.DEAD).count() == 2  # the two failures that tripped it
    assert jobs.filter(state=JobState.PENDING, attempts=0).count() == 4  # untouched
