"""Analysis results as the library API and the Django admin show them, and the admin's force-analyze action."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from analysis.models import PageAnalysis
from analysis.serializers import ChapterAnalysisSummarySerializer, PageAnalysisSerializer, chapter_analysis_summary
from crawler.models import AuditEvent
from jobs.models import Job

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def _done(page, tags, nsfw=False, **fields) -> PageAnalysis:
    return PageAnalysis.objects.create(
        page=page, state=PageAnalysis.State.DONE, tags=tags, nsfw=nsfw, analyzed_at=timezone.now(), **fields
    )


def test_page_analysis_serializer_is_read_only_and_exposes_the_results(make_page):
    row = _done(make_page(), ["dialogue"], ocr_text="HI", scene_description="A hello.", nsfw_score=0.1, duration_ms=5)

    data = PageAnalysisSerializer(row).data

    assert data["state"] == "done"
    assert (data["ocr_text"], data["tags"], data["scene_description"]) == ("HI", ["dialogue"], "A hello.")
    assert (data["nsfw"], data["nsfw_score"], data["duration_ms"]) == (False, 0.1, 5)
    serializer = PageAnalysisSerializer(row, data={"ocr_text": "changed"}, partial=True)
    assert serializer.is_valid()
    assert "ocr_text" not in serializer.validated_data


def test_chapter_summary_counts_states_nsfw_pages_and_top_tags(make_page, chapter, django_assert_num_queries):
    p1, p2, p3, p4, _never_queued = (make_page(index=i) for i in range(5))
    _done(p1, ["dialogue", "school"])
    _done(p2, ["dialogue", "nsfw"], nsfw=True)
    PageAnalysis.objects.create(page=p3, state=PageAnalysis.State.FAILED, tags=["ignored"])
    PageAnalysis.objects.create(page=p4)

    with django_assert_num_queries(3):
        summary = chapter_analysis_summary(chapter)

    assert summary == {
        "pages": 5,
        "by_state": {"pending": 1, "running": 0, "done": 2, "failed": 1, "not_queued": 1},
        "nsfw_pages": 1,
        "nsfw_page_indexes": [1],
        "top_tags": [{"tag": "dialogue", "count": 2}, {"tag": "nsfw", "count": 1}, {"tag": "school", "count": 1}],
    }
    assert ChapterAnalysisSummarySerializer(data=summary).is_valid()


def test_admin_lists_and_shows_results_read_only(make_page, client, staff):
    row = _done(make_page(), ["dialogue"], ocr_text="SHOWN TEXT")
    client.force_login(staff)

    listing = client.get(reverse("admin:analysis_pageanalysis_changelist"))
    detail = client.get(reverse("admin:analysis_pageanalysis_change", args=[row.pk]))

    assert listing.status_code == 200 and detail.status_code == 200
    assert b"SHOWN TEXT" in detail.content
    assert b'name="ocr_text"' not in detail.content  # no editable field
    assert client.get(reverse("admin:analysis_pageanalysis_add")).status_code == 403


def test_admin_force_analyze_action_queues_a_force_job_and_audits_it(make_page, client, staff):
    page = make_page()
    row = _done(page, ["dialogue"], duration_ms=700)
    client.force_login(staff)

    response = client.post(
        reverse("admin:analysis_pageanalysis_changelist"),
        {"action": "force_analyze", "_selected_action": [str(row.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    assert b"1 inserted" in response.content
    job = Job.objects.get(kind="analyze_page", page_id=page.id)
    assert (job.state, job.payload["force"]) == ("pending", True)
    audit = AuditEvent.objects.get(action="force_analyze")
    assert (audit.actor, audit.scope, audit.target_id, audit.detail) == (
        staff,
        "page",
        str(page.id),
        {"outcome": "inserted"},
    )
    assert PageAnalysis.objects.get(pk=row.pk).duration_ms == 700
