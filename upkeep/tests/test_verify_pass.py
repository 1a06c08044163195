"""The verify pass over real rows and real stored files, on the local disk and on the S3 test server."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.utils import timezone

from catalog.models import Chapter, Page
from jobs.models import Job
from reader.export import chapters_to_export, export_library
from upkeep.models import VerifyFinding, VerifyRun
from upkeep.tests.library import damaged_library, verify_stopping_after_every_batch
from upkeep.verify import listing, repairs
from upkeep.verify import run as verify_run
from upkeep.verify.run import Options, run_verify, start_or_resume

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


@pytest.fixture(autouse=True)
def _no_grace(settings):
    settings.VERIFY_ORPHAN_GRACE_SECS = 0  # S3 cannot date a test's file back; the grace is pinned by the pure tests


def findings(run: VerifyRun) -> dict[str, list[VerifyFinding]]:
    found: dict[str, list[VerifyFinding]] = {}
    for finding in run.findings.order_by("id"):
        found.setdefault(finding.kind, []).append(finding)
    return found


def test_verify_finds_the_deleted_file_the_corrupt_page_the_orphan_and_the_gap(media_storage):
    lib = damaged_library()
    run = start_or_resume(Options(full=True))
    assert run_verify(run) is True
    found = findings(run)
    assert [f.page_id for f in found["missing"]] == [lib["missing"].id]
    assert [f.page_id for f in found["corrupt"]] == [lib["corrupt"].id]
    assert [f.name for f in found["orphan"]] == [lib["orphan"]]
    assert [f.chapter_id for f in found["gap"]] == [lib["chapters"][4].id]
    assert found["gap"][0].detail == "chapter 4" and found["gap"][0].source_id == "site"
    run.refresh_from_db()
    assert run.finished_at is not None and run.phase == VerifyRun.Phase.DONE
    assert (run.counts["pages"], run.counts["hashed"], run.counts["files"]) == (8, 7, 8)
    assert run.storage == ("s3" if media_storage else "filesystem")


def test_a_sample_checks_every_file_is_there_but_hashes_only_some(media_storage):
    damaged_library()
    run = start_or_resume(Options(full=False, sample_pages=0))
    run_verify(run)
    run.refresh_from_db()
    assert run.counts["hashed"] == 0 and run.counts["missing"] == 1 and run.counts["corrupt"] == 0


def test_a_pass_stopped_after_each_batch_resumes_where_it_stopped_and_reports_each_problem_once(
    monkeypatch, media_storage
):
    damaged_library()
    monkeypatch.setattr(verify_run, "BATCH", 1)
    monkeypatch.setattr(verify_run, "MANGA_BATCH", 1)
    monkeypatch.setattr(listing, "DIRECTORY_BATCH", 2)  # several scans of the pages folder on the local disk
    run, stops = verify_stopping_after_every_batch(50)
    assert VerifyRun.objects.count() == 1
    assert stops >= 8 + 8  # a stop after every page row and every stored file
    assert sorted(run.findings.values_list("kind", flat=True)) == ["corrupt", "gap", "missing", "orphan"]


def test_a_restart_begins_a_new_pass_instead_of_resuming():
    damaged_library()
    first = start_or_resume(Options(full=True))
    assert start_or_resume(Options(full=True)) == first
    assert start_or_resume(Options(full=True), restart=True) != first


def test_repairs_queue_damaged_chapters_in_order_and_delete_orphans_only_when_confirmed(media_storage):
    lib = damaged_library()
    run = start_or_resume(Options(full=True))
    run_verify(run)
    done = repairs.requeue_damaged(run)
    assert done.findings == 3
    chapters = lib["chapters"]
    queued = list(Job.objects.filter(kind="sync_chapter_content").order_by("scheduled_at", "created_at"))
    assert [job.chapter_id for job in queued] == [chapters[1].id, chapters[2].id, chapters[4].id]
    assert not Page.objects.filter(id__in=[lib["missing"].id, lib["corrupt"].id]).exists()
    assert not default_storage.exists(lib["corrupt"].image.name)  # the corrupt bytes are gone too
    states = Chapter.objects.filter(id__in=[chapters[n].id for n in (1, 2, 4)]).values_list("sync_state", flat=True)
    assert set(states) == {"queued"}
    assert repairs.requeue_damaged(run).findings == 0  # done once

    with pytest.raises(PermissionError, match="confirmation"):
        repairs.delete_orphans(run, confirmed=False)
    assert default_storage.exists(lib["orphan"])
    assert repairs.delete_orphans(run, confirmed=True).files == 1
    assert not default_storage.exists(lib["orphan"])


def test_an_orphan_a_page_row_names_since_the_pass_is_kept():
    lib = damaged_library()
    run = start_or_resume(Options(full=True))
    run_verify(run)
    Page.objects.filter(id=lib["missing"].id).update(image=lib["orphan"])
    assert repairs.delete_orphans(run, confirmed=True).files == 0
    assert default_storage.exists(lib["orphan"])


def test_a_stale_export_is_found_and_exported_again(tmp_path: Path):
    lib = damaged_library()
    chapter = lib["chapters"][5]
    export_library(tmp_path, chapters_to_export().filter(id__in=[lib["chapters"][3].id, chapter.id]))
    Chapter.objects.filter(id=chapter.id).update(updated_at=timezone.now() + timezone.timedelta(seconds=5))
    run = start_or_resume(Options(export_dir=str(tmp_path)))
    run_verify(run)
    [stale] = run.findings.filter(kind="stale")
    assert stale.chapter_id == chapter.id and stale.detail == "older than its chapter"
    before = os.stat(tmp_path / stale.name).st_mtime
    assert repairs.reexport_stale(run).chapters == 1
    assert os.stat(tmp_path / stale.name).st_mtime > before


def test_the_command_prints_the_report_and_refuses_bad_options(tmp_path, monkeypatch):
    damaged_library()
    out = io.StringIO()
    call_command("verify", "--full", stdout=out)
    text = out.getvalue()
    assert "finished" in text and "8 pages (7 hashed)" in text
    assert "missing         1" in text and "gap             1" in text
    with pytest.raises(Exception, match="--export-dir"):
        call_command("verify", "--export-dir", str(tmp_path / "nowhere"))
    with pytest.raises(Exception, match="not confirmed"):
        monkeypatch.setattr("builtins.input", lambda prompt: "no")
        call_command("verify", "--repair", "orphans", stdout=io.StringIO())
    assert VerifyFinding.objects.filter(kind="orphan", repaired_at=None).count() == 1


def test_the_command_stops_at_its_time_limit_and_the_next_run_resumes(monkeypatch):
    damaged_library()
    monkeypatch.setattr(verify_run, "BATCH", 2)
    out = io.StringIO()
    call_command("verify", "--full", "--max-seconds", "0.000001", stdout=out)
    assert "paused at pages (run again to resume)" in out.getvalue()
    run = VerifyRun.objects.get()
    assert run.counts["pages"] == 2 and run.cursor["index"] == 1
    out = io.StringIO()
    call_command("verify", "--full", stdout=out)
    assert "resuming verify run" in out.getvalue() and "finished" in out.getvalue()
    run.refresh_from_db()
    assert run.counts["pages"] == 8 and VerifyRun.objects.count() == 1
    assert run.findings.count() == 4
