"""A suwayomi source through the queue (in-process and real crawl workers): reconcile, a WebView login, an outage."""

from __future__ import annotations

import pytest

from catalog.models import Chapter, Manga, Source
from crawler.passes.metadata_pass import run_metadata_pass
from crawler.payloads import MetadataPass, Reconcile, SyncChapterContent
from jobs import queue
from jobs.models import Job, JobState, WorkerStatus
from jobs.worker.circuit import counts_toward_circuit
from jobs.worker.status.handle import StatusHandle
from sources.suwayomi.failures import SourceNeedsLogin
from testsupport.suwayomi.catalog import HARBOR, StandinChapter, StandinManga
from testsupport.theme_sites.expect import LOCAL_PACE, crawl, drain_crawl_worker
from testsupport.worker_processes import wait_until, worker_pool

pytestmark = [pytest.mark.django_db(transaction=True)]


def _row(standin) -> Source:
    settings = {"suwayomi_source": HARBOR.id, **LOCAL_PACE}
    return Source.objects.create(
        id="harbor", name="Harbor", kind="suwayomi", base_url=standin.base_url, settings=settings
    )


def test_reconcile_finds_a_manga_the_newest_first_walk_stopped_short_of(standin):
    _row(standin)
    crawl("harbor")
    assert Manga.objects.count() == 7
    # A manga that appears deep in the listing: the early-stopping walk never reaches it, reconcile does.
    late = StandinManga(200, HARBOR.id, "Deep Harbor", "Old Author", ("Drama",), "COMPLETED",
                        (StandinChapter(20001, 200, "Chapter 1", 1.0, 1, 1_700_000_000_000),))  # fmt: skip
    standin.mangas = (*standin.mangas, late)
    queue.enqueue(Reconcile(source_id="harbor"))
    drain_crawl_worker()
    stored = Manga.objects.get(title="Deep Harbor")
    assert Chapter.objects.get(manga=stored).sync_state == "done"
    assert Job.objects.filter(state="dead").count() == 0


def test_a_source_that_needs_a_webview_login_dead_letters_its_pass_at_once_naming_the_source(standin):
    _row(standin)
    standin.webview_sources.add(HARBOR.id)
    crawl("harbor")
    job = Job.objects.get(kind=MetadataPass.kind)
    assert (job.state, job.attempts) == ("dead", 1)
    assert "Suwayomi source 'Harbor Scans (EN)'" in job.last_error and "WebView" in job.last_error
    assert not counts_toward_circuit(SourceNeedsLogin("a login wall is not an outage"))


def test_suwayomi_down_leaves_the_download_to_be_retried_not_dead(standin):
    _row(standin)
    crawl("harbor")
    chapter = Chapter.objects.filter(manga__title="Crimson Tide").order_by("number").first()
    Chapter.objects.filter(id=chapter.id).update(sync_state="pending")
    standin.down = True
    queue.enqueue(
        SyncChapterContent(source_id="harbor", chapter_id=chapter.id, source_chapter_key=chapter.source_chapter_key)
    )
    drain_crawl_worker()
    job = Job.objects.get(kind=SyncChapterContent.kind, payload__chapter_id=str(chapter.id), state__in=["pending"])
    assert "503" in job.last_error and job.attempts == 1  # not dead: retried after its backoff


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    yield from worker_pool(child_env, manage_cmd, tmp_path)


@pytest.mark.process
def test_suwayomi_down_trips_a_real_workers_circuit_instead_of_dead_lettering_every_download(
    standin, settings, workers
):
    settings.ANALYSIS_ENABLED = False
    settings.JOBS_MAX_ATTEMPTS = 1  # without the breaker every job would die on its first failure
    row = _row(standin)
    run_metadata_pass(row, status=StatusHandle())
    downloads = Job.objects.filter(kind=SyncChapterContent.kind)
    assert downloads.filter(state=JobState.PENDING).count() == 17

    standin.down = True
    worker = workers.start(JOBS_CIRCUIT_BREAKER_THRESHOLD="2", JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS="300")
    wait_until(
        lambda: WorkerStatus.objects.filter(pid=worker.pid, flags__circuit_open_until__isnull=False).first(),
        what="the circuit to open",
    )
    assert worker.terminate() == 0
    assert downloads.filter(state=JobState.DEAD).count() == 2  # the two failures that tripped it
    assert downloads.filter(state=JobState.PENDING, attempts=0).count() == 15  # untouched, for when it is back
