"""A chapter download killed with SIGKILL mid-chapter, then run again: exactly its pages, no orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage

from catalog.models import Chapter, Page, Source
from crawler.factory import get_source
from crawler.passes.chapter_download import download_chapter, page_directory
from crawler.payloads import SyncManga
from crawler.workers.handlers import JobContext
from jobs import kinds
from jobs.queue import enqueue, lease
from jobs.worker.status.handle import StatusHandle

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.process]

CHILD = """
import threading
from catalog.models import Chapter
from crawler.passes.chapter_download import download_chapter
from crawler.factory import get_source
from jobs.worker.status.handle import StatusHandle
chapter = Chapter.objects.select_related("manga", "source").get(id="{chapter_id}")
download_chapter(chapter, get_source(chapter.source), status=StatusHandle(), cancel=threading.Event())
"""


def _stored_files(chapter) -> list[str]:
    try:
        return [f for f in default_storage.listdir(page_directory(chapter.id))[1] if not f.startswith(".")]
    except FileNotFoundError:
        return []


def wait_until(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_download_killed_mid_chapter_is_completed_by_a_rerun_without_duplicates_or_orphans(
    demo_site_factory, child_env, manage_cmd, settings
):
    settings.ANALYSIS_ENABLED = False
    site = demo_site_factory(mangas=1, chapters=(1, 1), pages=(8, 8))
    source_row = Source.objects.create(id="demo", name="Demo", kind="demo", base_url=site.base_url)
    enqueue(SyncManga(source_id="demo", source_manga_key="manga-0001", url=site.url("/manga/manga-0001"), title=""))
    (job,) = lease(["sync_manga"], 1, timedelta(minutes=5))
    kinds.registered()["sync_manga"].handler(job.payload, JobContext(job, StatusHandle(), threading.Event()))
    chapter = Chapter.objects.get()
    site.faults.slow_secs = 0.2  # a window to kill the child between pages

    env = dict(child_env, ANALYSIS_ENABLED="false")
    child = subprocess.Popen(
        [*manage_cmd, "shell", "-c", CHILD.format(chapter_id=chapter.id)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(lambda: len(_stored_files(chapter)) >= 3), "child stored no pages"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    kept = Page.objects.filter(chapter=chapter).count()
    assert kept < 8, "killed mid-chapter"
    assert len(_stored_files(chapter)) >= 3  # files whose rows may not be written yet: the rerun sweeps them
    assert Chapter.objects.get(id=chapter.id).sync_state == "downloading"

    site.faults.slow_secs = 0
    source = get_source(source_row)
    try:
        stored_now = download_chapter(
            Chapter.objects.select_related("manga").get(id=chapter.id),
            source,
            status=StatusHandle(),
            cancel=threading.Event(),
        )
    finally:
        source.close()

    pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
    assert [p.index for p in pages] == list(range(8))
    assert stored_now == 8 - kept
    files = sorted(default_storage.listdir(page_directory(chapter.id))[1])
    assert files == sorted(os.path.basename(p.image.name) for p in pages)
    chapter.refresh_from_db()
    assert (chapter.sync_state, chapter.page_count) == ("done", 8)
