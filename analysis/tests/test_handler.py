"""The analyze_page handler end to end on one thread: real queue rows, the stand-in vision endpoint,
and the analyze worker's own settlement (ack_done / ack_failed)."""

from __future__ import annotations

import os
import uuid

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import InMemoryStorage
from django.utils import timezone

from analysis.backends.base import AnalysisError
from analysis.handlers import local_image_path
from analysis.models import PageAnalysis
from analysis.payloads import AnalyzePage
from analysis.service import enqueue_for_page, should_skip
from analysis.tests.helpers import job_context, lease_one, run_and_settle
from jobs.errors import JobCancelled
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def _analysis(page) -> PageAnalysis:
    return PageAnalysis.objects.get(page=page)


def test_good_answer_is_stored_with_duration_and_the_job_acked_done(make_page, vision_server):
    page = make_page()
    enqueue_for_page(page)
    vision_server.good(text="WHERE AM I?", tags=["dialogue"], description="A boy wakes up.", nsfw=False, score=0.03)
    lease = lease_one()

    assert run_and_settle(lease) is None

    row = _analysis(page)
    assert row.state == PageAnalysis.State.DONE
    assert (row.ocr_text, row.tags, row.scene_description) == ("WHERE AM I?", ["dialogue"], "A boy wakes up.")
    assert (row.nsfw, row.nsfw_score, row.backend, row.model) == (False, 0.03, "openai", "standin-vision")
    assert row.duration_ms is not None and row.analyzed_at is not None and row.error == ""
    assert Job.objects.get(id=lease.id).state == JobState.DONE


@pytest.mark.parametrize(
    ("script", "kept"),
    [
        (lambda s: s.content("I cannot see any image, sorry."), "I cannot see any image, sorry."),
        (lambda s: s.error(500, "upstream exploded"), "upstream exploded"),
        (lambda s: s.hang(), "timed out after 0.5 s"),
    ],
    ids=["malformed-json", "http-500", "timeout"],
)
def test_failed_attempt_keeps_the_raw_text_and_goes_back_to_pending(make_page, vision_server, settings, script, kept):
    settings.VISION_TIMEOUT_SECS = 0.5
    page = make_page()
    enqueue_for_page(page)
    script(vision_server)
    lease = lease_one()

    error = run_and_settle(lease)

    assert isinstance(error, AnalysisError)
    job = Job.objects.get(id=lease.id)
    assert job.state == JobState.PENDING  # attempt 1 of 5: retried after a backoff
    assert job.scheduled_at > timezone.now()
    assert kept in job.last_error
    row = _analysis(page)
    assert row.state == PageAnalysis.State.FAILED
    assert kept in row.error
    assert row.duration_ms is None and row.analyzed_at is None


def test_last_failed_attempt_dead_letters_the_job(make_page, vision_server, settings):
    settings.JOBS_MAX_ATTEMPTS = 1
    page = make_page()
    enqueue_for_page(page)
    vision_server.error(500, "still down")

    run_and_settle(lease_one())

    job = Job.objects.get(page_id=page.id)
    assert job.state == JobState.DEAD and "still down" in job.last_error
    assert _analysis(page).state == PageAnalysis.State.FAILED


def test_done_page_is_skipped_without_calling_the_backend(make_page, vision_server):
    page = make_page()
    PageAnalysis.objects.create(page=page, state=PageAnalysis.State.DONE, ocr_text="old", duration_ms=900)
    enqueue_for_page(page)

    assert run_and_settle(lease_one()) is None

    assert vision_server.requests == []
    row = _analysis(page)
    assert (row.state, row.ocr_text, row.duration_ms) == (PageAnalysis.State.DONE, "old", 900)
    assert Job.objects.get(page_id=page.id).state == JobState.DONE


def test_done_page_is_analysed_again_when_forced(make_page, vision_server):
    page = make_page()
    PageAnalysis.objects.create(page=page, state=PageAnalysis.State.DONE, ocr_text="old", duration_ms=900)
    vision_server.good(text="NEW")
    enqueue_for_page(page, force=True)

    assert run_and_settle(lease_one()) is None

    assert len(vision_server.requests) == 1
    row = _analysis(page)
    assert (row.state, row.ocr_text) == (PageAnalysis.State.DONE, "NEW")
    assert row.analyzed_at is not None  # written by the successful re-analysis, with its duration


def test_record_duration_gate_failed_non_terminal_retries_of_a_force_reanalysis_keep_the_last_duration(
    make_page, vision_server, settings
):
    """A done row with a known duration, force re-analysed by a failing backend with
    max_attempts=3; neither non-terminal failure overwrites duration_ms (nor the last good results)."""
    settings.JOBS_MAX_ATTEMPTS = 3
    page = make_page()
    analyzed_at = timezone.now()
    PageAnalysis.objects.create(
        page=page,
        state=PageAnalysis.State.DONE,
        ocr_text="GOOD TEXT",
        tags=["dialogue"],
        duration_ms=1234,
        backend="openai",
        analyzed_at=analyzed_at,
    )
    enqueue_for_page(page, force=True)

    for attempt in (1, 2):
        vision_server.error(500, f"failure {attempt}")
        lease = lease_one()
        assert lease.attempts == attempt and lease.payload.force is True
        assert isinstance(run_and_settle(lease), AnalysisError)
        job = Job.objects.get(id=lease.id)
        assert job.state == JobState.PENDING  # non-terminal: attempts < max_attempts
        row = _analysis(page)
        assert row.duration_ms == 1234
        assert (row.ocr_text, row.tags, row.analyzed_at) == ("GOOD TEXT", ["dialogue"], analyzed_at)
        assert f"failure {attempt}" in row.error
        Job.objects.filter(id=lease.id).update(scheduled_at=timezone.now())  # skip the backoff wait


def test_job_for_a_deleted_page_finishes_without_work(make_page, vision_server):
    page = make_page()
    enqueue_for_page(page)
    lease = lease_one()
    page.delete()

    assert run_and_settle(lease) is None
    assert vision_server.requests == []
    assert Job.objects.get(id=lease.id).state == JobState.DONE


def test_cancelled_job_raises_before_calling_the_backend(make_page, vision_server):
    page = make_page()
    enqueue_for_page(page)
    lease = lease_one()
    context = job_context(lease)
    context.cancel.set()

    from analysis.handlers import handle_analyze_page

    with pytest.raises(JobCancelled):
        handle_analyze_page(lease.payload, context)
    assert vision_server.requests == []


def test_missing_image_file_is_a_failed_attempt(make_page, vision_server):
    page = make_page()
    enqueue_for_page(page)
    page.image.storage.delete(page.image.name)

    error = run_and_settle(lease_one())

    assert isinstance(error, AnalysisError) and "missing" in str(error)
    assert _analysis(page).state == PageAnalysis.State.FAILED


@pytest.mark.parametrize(
    ("state", "force", "skip"),
    [
        ("done", False, True),
        ("done", True, False),
        ("pending", False, False),
        ("running", False, False),
        ("failed", False, False),
        ("failed", True, False),
    ],
)
def test_should_skip_only_a_done_page_without_force(state, force, skip):
    assert should_skip(PageAnalysis(state=state), AnalyzePage(page_id=uuid.uuid4(), force=force)) is skip


def test_a_page_on_a_remote_storage_is_analysed_from_a_temporary_copy_that_is_removed(make_page, settings):
    page = make_page()
    with page.image.open("rb") as stored:
        data = stored.read()
    remote = InMemoryStorage()  # like an S3 bucket: no local paths
    page.image.storage = remote
    page.image.name = remote.save(page.image.name, ContentFile(data))

    with local_image_path(page) as path:
        assert not path.startswith(str(settings.MEDIA_ROOT))
        with open(path, "rb") as copy:
            assert copy.read() == data
    assert not os.path.exists(path)
