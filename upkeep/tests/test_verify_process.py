"""The verify pass in real processes: a crawl worker downloads a fixture site, the library is damaged, `manage.py
verify` finds every problem, its repairs and a `crawl_worker --drain` bring the library back whole; on the local
disk and on the S3 test server."""

from __future__ import annotations

import hashlib
import subprocess
import uuid

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from catalog.models import Chapter, Page, Source
from crawler.passes.metadata_pass import run_metadata_pass
from jobs.worker.status.handle import StatusHandle
from reader.tests.factories import image_bytes
from testsupport.worker_processes import REPO_ROOT, worker_pool
from upkeep.models import VerifyRun

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    yield from worker_pool(child_env, manage_cmd, tmp_path)


def manage(manage_cmd, env, *args: str) -> str:
    done = subprocess.run(
        [*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def report_counts(text: str) -> dict[str, int]:
    """The problem lines of `verify`'s report: `  <kind> <count>  <label>`."""
    counts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in {"missing", "corrupt", "orphan", "gap", "stale"}:
            counts[parts[0]] = int(parts[1])
    return counts


def whole(chapters: list[Chapter]) -> bool:
    """Every chapter downloaded, one page row a page, each stored file's bytes matching its sha256."""
    for chapter in chapters:
        chapter.refresh_from_db()
        pages = list(Page.objects.filter(chapter=chapter).order_by("index"))
        if chapter.sync_state != Chapter.SyncState.DONE or [p.index for p in pages] != list(range(chapter.page_count)):
            return False
        for page in pages:
            with default_storage.open(page.image.name, "rb") as stored:
                if hashlib.sha256(stored.read()).hexdigest() != page.sha256:
                    return False
    return True


def test_verify_finds_what_was_damaged_and_its_repairs_bring_the_library_back_whole(
    media_storage, demo_site_factory, workers, child_env, manage_cmd, settings
):
    storage_env = media_storage.env() if media_storage else {}
    env = {**child_env, **storage_env, "VERIFY_ORPHAN_GRACE_SECS": "0", "ANALYSIS_ENABLED": "false"}
    settings.ANALYSIS_ENABLED = False
    site = demo_site_factory(mangas=1, chapters=(4, 4), pages=(3, 3))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    assert workers.start("--drain", **storage_env).wait(120) == 0
    chapters = list(Chapter.objects.order_by("number"))
    assert len(chapters) == 4 and whole(chapters)

    first, second, third, fourth = chapters
    lost = Page.objects.get(chapter=first, index=0)
    default_storage.delete(lost.image.name)
    corrupt = Page.objects.get(chapter=second, index=2)
    default_storage.delete(corrupt.image.name)
    default_storage.save(corrupt.image.name, ContentFile(b"\x89PNG\r\n\x1a\n garbled on disk"))
    # The third chapter's download never happened: listed by the site, between stored chapters.
    for page in Page.objects.filter(chapter=third):
        default_storage.delete(page.image.name)
    Page.objects.filter(chapter=third).delete()
    Chapter.objects.filter(id=third.id).update(sync_state=Chapter.SyncState.FAILED, page_count=0)
    orphan = default_storage.save(f"pages/{fourth.id}/{uuid.uuid4().hex}.png", ContentFile(image_bytes()))

    report = manage(manage_cmd, env, "verify", "--full")
    assert report_counts(report) == {"missing": 1, "corrupt": 1, "orphan": 1, "gap": 1, "stale": 0}, report

    repaired = manage(manage_cmd, env, "verify", "--repair", "pages", "--repair", "orphans", "--yes")
    assert "3 chapters queued again" in repaired and "1 orphan files deleted" in repaired, repaired
    assert not default_storage.exists(orphan)
    assert workers.start("--drain", **storage_env).wait(120) == 0
    assert whole(chapters)

    # The scheduled form: cron queues a verify_library job, a crawl worker runs it as a new pass.
    assert "verify_library queued" in manage(manage_cmd, env, "verify", "--enqueue", "--full")
    assert workers.start("--drain", **storage_env).wait(120) == 0
    latest = VerifyRun.objects.order_by("-id").first()
    assert latest.finished_at is not None and latest.full
    assert latest.counts["pages"] == 12 and latest.counts["hashed"] == 12
    assert {kind: latest.counts[kind] for kind in ("missing", "corrupt", "orphan", "gap", "stale")} == dict.fromkeys(
        ("missing", "corrupt", "orphan", "gap", "stale"), 0
    )
