"""`manage.py analyze_worker --drain` as a real process over a chapter crawled from the live demo site."""

from __future__ import annotations

import subprocess
import threading
from datetime import timedelta

import pytest

from analysis.models import PageAnalysis
from catalog.models import Chapter, Page, Source
from crawler.passes.metadata_pass import run_metadata_pass
from crawler.workers.handlers import JobContext
from jobs import kinds, queue
from jobs.models import Job, JobState
from jobs.worker.status.handle import StatusHandle

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def crawled_chapter(demo_site_factory, settings) -> Chapter:
    """One demo manga with one 3-page chapter, crawled and downloaded; its pages queued for analysis."""
    settings.ANALYSIS_ENABLED = True
    site = demo_site_factory(mangas=1, chapters=(1, 1), pages=(3, 3))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    (content_job,) = queue.lease(["sync_chapter_content"], 1, timedelta(minutes=5))
    context = JobContext(lease=content_job, status=StatusHandle(), cancel=threading.Event())
    kinds.registered()[content_job.kind].handler(content_job.payload, context)
    queue.ack_done(content_job)
    return Chapter.objects.get()


def test_analyze_worker_drain_processes_every_page_of_a_crawled_demo_chapter(crawled_chapter, child_env, manage_cmd):
    pages = list(Page.objects.filter(chapter=crawled_chapter).order_by("index"))
    assert len(pages) == 3
    assert Job.objects.filter(kind="analyze_page", state=JobState.PENDING).count() == 3

    env = dict(child_env, ANALYSIS_BACKEND="local", ANALYSIS_ENABLED="true")
    done = subprocess.run(
        [*manage_cmd, "analyze_worker", "--drain"], env=env, capture_output=True, text=True, timeout=300
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert set(Job.objects.filter(kind="analyze_page").values_list("state", flat=True)) == {JobState.DONE}
    number = format(crawled_chapter.number.normalize(), "f")
    for page in pages:
        analysis = PageAnalysis.objects.get(page=page)
        assert analysis.state == PageAnalysis.State.DONE, analysis.error
        assert (analysis.backend, analysis.nsfw) == ("local", False)
        assert analysis.duration_ms is not None and analysis.duration_ms > 0
        # Each page's own caption was read (the demo site numbers pages from 1, storage from 0).
        assert f"CHAPTER {number}" in analysis.ocr_text
        assert f"PAGE {page.index + 1}" in analysis.ocr_text
