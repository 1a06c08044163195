"""The worker and pass commands: thin wrappers, validated options, cron-fit exit codes."""

from __future__ import annotations

import io
import subprocess
import uuid

import pytest
from django.core.management import CommandError, call_command

from analysis.payloads import AnalyzePage
from catalog.models import Manga
from conftest import REPO_ROOT
from crawler.payloads import MetadataPass, Reconcile, SyncChapterContent, SyncManga
from jobs import queue
from jobs.models import Job, JobState


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_metadata_pass_command_runs_one_pass_in_the_foreground(demo_site, demo_source, settings):
    settings.ANALYSIS_ENABLED = False
    output = run("metadata_pass", "--source", "demo")
    assert "metadata pass demo: discovered=12 upserted=12" in output
    assert Manga.objects.count() == len(demo_site.catalog)


@pytest.mark.django_db
def test_metadata_pass_enqueue_hands_the_pass_to_a_worker_once(demo_source):
    assert "metadata pass demo: enqueued" in run("metadata_pass", "--enqueue")
    assert "metadata pass demo: already in flight" in run("metadata_pass", "--enqueue")
    assert Job.objects.filter(kind=MetadataPass.kind, state=JobState.PENDING).count() == 1


@pytest.mark.django_db
def test_reconcile_command_enqueues_every_missing_manga(demo_site, demo_source):
    output = run("reconcile")
    assert "reconcile demo: walked=12 missing=12 enqueued=12 skipped=0" in output
    assert Job.objects.filter(kind=SyncManga.kind).count() == 12


@pytest.mark.django_db
def test_reconcile_enqueue_hands_the_pass_to_a_worker(demo_source):
    assert "reconcile demo: enqueued" in run("reconcile", "--enqueue")
    assert Job.objects.filter(kind=Reconcile.kind).count() == 1


@pytest.mark.django_db
def test_unknown_source_is_a_clear_error_that_changes_nothing(demo_source):
    with pytest.raises(CommandError, match="unknown source"):
        run("reconcile", "--source", "nope", "--enqueue")
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_a_pass_with_no_enabled_source_says_how_to_get_one():
    with pytest.raises(CommandError, match="no enabled source"):
        run("metadata_pass")


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_worker_commands_reject_a_bad_worker_count_before_any_work(value):
    with pytest.raises(CommandError):
        run("crawl_worker", "--workers", value)


def test_once_and_drain_are_exclusive():
    with pytest.raises(CommandError):
        run("analyze_worker", "--once", "--drain")


@pytest.mark.django_db(transaction=True)
def test_analyze_worker_leases_only_analysis_jobs():
    crawl = queue.enqueue(SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key="k"))
    analysis = queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))  # its page is gone: a no-op success

    run("analyze_worker", "--drain")

    assert Job.objects.get(id=analysis.id).state == JobState.DONE
    row = Job.objects.get(id=crawl.id)
    assert (row.state, row.attempts) == (JobState.PENDING, 0)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_reconcile_exits_non_zero_when_the_source_is_down(demo_site, demo_source, child_env, manage_cmd):
    demo_site.faults.outage = True
    result = subprocess.run(
        [*manage_cmd, "reconcile"], env=child_env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert "reconcile failed for demo" in result.stderr
    assert not Job.objects.filter(kind=SyncManga.kind).exists()
