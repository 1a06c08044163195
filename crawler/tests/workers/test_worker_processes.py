"""`crawl_worker --processes N`: one command, N real worker processes sharing its job threads, against the demo site."""

from __future__ import annotations

import os

import psutil
import pytest
from django.core.management import CommandError, call_command

from catalog.models import Chapter, Page
from crawler.passes.metadata_pass import run_metadata_pass
from jobs.models import Job, JobState, WorkerStatus
from jobs.worker.status.handle import StatusHandle
from testsupport.worker_processes import stored_files, wait_until, worker_pool

CHAPTER_JOB = "sync_chapter_content"


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    yield from worker_pool(child_env, manage_cmd, tmp_path)


def crawl_queued(demo_site_factory, settings, chapters: int):
    """A demo manga whose metadata pass has queued `chapters` chapter downloads of 4 pages each."""
    from catalog.models import Source

    settings.ANALYSIS_ENABLED = False
    site = demo_site_factory(mangas=1, chapters=(chapters, chapters), pages=(4, 4))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    assert Job.objects.filter(kind=CHAPTER_JOB).count() == chapters
    return site


def worker_pids(parent: int) -> set[int]:
    return set(WorkerStatus.objects.exclude(pid=parent).values_list("pid", flat=True))


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_two_processes_drain_every_chapter_exactly_once(demo_site_factory, settings, workers):
    crawl_queued(demo_site_factory, settings, chapters=6)

    command = workers.start("--processes", "2", "--workers", "4", "--drain")
    assert command.wait() == 0, command.log()

    # Two workers ran, each a child of the command, each with its share of the threads.
    rows = list(WorkerStatus.objects.values_list("pid", "worker_count", "stopped_at"))
    assert len(rows) == 2
    assert all(pid != command.pid for pid, _, _ in rows)
    assert sorted(concurrency for _, concurrency, _ in rows) == [2, 2]
    assert all(stopped is not None for _, _, stopped in rows)
    assert "started 2 worker processes" in command.log()

    assert set(Job.objects.filter(kind=CHAPTER_JOB).values_list("state", "attempts")) == {(JobState.DONE, 1)}
    for chapter in Chapter.objects.all():
        assert chapter.sync_state == Chapter.SyncState.DONE
        pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
        assert [page.index for page in pages] == [0, 1, 2, 3]
        assert stored_files(chapter.id) == {page.image.name for page in pages}


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_sigterm_to_the_command_stops_every_process_and_hands_their_jobs_back(demo_site_factory, settings, workers):
    site = crawl_queued(demo_site_factory, settings, chapters=2)
    site.faults.slow_secs = 0.5

    command = workers.start("--processes", "2", "--workers", "2")
    # Both processes mid-chapter: each holds one of the two chapter jobs.
    wait_until(lambda: Job.objects.filter(kind=CHAPTER_JOB, state=JobState.RUNNING).count() == 2, what="two jobs")
    children = wait_until(lambda: worker_pids(command.pid) if len(worker_pids(command.pid)) == 2 else None)
    assert {child.pid for child in psutil.Process(command.pid).children()} == children

    assert command.terminate(timeout=20) == 0
    for pid in children:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    # Handed back, no attempt burned; each process stamped its clean stop.
    assert set(Job.objects.filter(kind=CHAPTER_JOB).values_list("state", "attempts")) == {(JobState.PENDING, 0)}
    assert WorkerStatus.objects.filter(pid__in=children, stopped_at__isnull=False).count() == 2

    # Nothing lost: a plain worker finishes both chapters.
    site.faults.slow_secs = 0
    assert workers.start("--drain", JOBS_WORKERS="2").wait() == 0
    assert Page.objects.count() == 8
    for chapter in Chapter.objects.all():
        assert stored_files(chapter.id) == {page.image.name for page in Page.objects.filter(chapter=chapter)}


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_a_killed_process_stops_the_others_and_the_command_fails(workers):
    command = workers.start("--processes", "2", "--workers", "2")
    wait_until(lambda: command.log().count("worker ready") == 2, what="both workers ready")
    # The workers by their status rows: a short-lived helper the parent ran at start (a library probing the
    # system with a subprocess) is its child too for a moment.
    children = sorted(wait_until(lambda: worker_pids(command.pid) if len(worker_pids(command.pid)) == 2 else None))
    survivor = {psutil.Process(pid) for pid in children[1:]}
    os.kill(children[0], 9)

    assert command.wait(20) == 137  # the child's death, as a shell reports it
    assert all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in survivor)
    assert "stopping the others" in command.log()


@pytest.mark.process
def test_a_missing_database_is_one_line_from_the_command_not_a_traceback_from_each_process(workers):
    command = workers.start(
        "--processes", "2", "--workers", "2", DATABASE_URL="postgres://postgres@127.0.0.1:5432/ml_no_such_db"
    )
    assert command.wait(60) == 2
    assert "cannot connect to postgres://postgres@127.0.0.1:5432/ml_no_such_db" in command.log()
    assert "Traceback" not in command.log()
    assert "started 2 worker processes" not in command.log()


def test_more_processes_than_job_threads_is_refused_naming_the_options():
    with pytest.raises(CommandError, match=r"--processes 3 is more than the 2 job threads"):
        call_command("crawl_worker", "--processes", "3", "--workers", "2", "--drain")
