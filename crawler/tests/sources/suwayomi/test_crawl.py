"""A suwayomi source through the queue (in-process crawl worker): reconcile, a WebView login, an outage."""

from __future__ import annotations

import pytest

from catalog.models import Chapter, Manga, Source
from crawler.payloads import MetadataPass, Reconcile, SyncChapterContent
from crawler.sources.suwayomi.failures import SourceNeedsLogin
from jobs import queue
from jobs.models import Job
from jobs.worker.circuit import counts_toward_circuit
from testsupport.suwayomi.catalog import HARBOR, StandinChapter, StandinManga
from testsupport.theme_sites.expect import LOCAL_PACE, crawl, drain_crawl_worker

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
