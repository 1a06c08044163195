"""The Django admin face: job filters/search/actions, manga/chapter requeue, and the read-only audit log.

Admin actions call the same `console.control` functions as the API, so they
audit the same way.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from analysis.payloads import AnalyzePage
from analysis.service import EnqueueForPageOutcome
from catalog.models import Chapter
from crawler.models import AuditEvent, SourceThrottle
from crawler.payloads import MetadataPass
from crawler.politeness import limiter
from jobs.models import Job, JobState
from testsupport import api_factories as f

ORIGIN = {"HTTP_ORIGIN": "http://testserver"}


@pytest.fixture
def admin_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def library(db):
    src = f.source("demo")
    m = f.manga("Berserk", src=src)
    return {"src": src, "manga": m, "ch1": f.chapter(m, 1, src=src), "ch2": f.chapter(m, 2, src=src)}


def act(client: Client, model: str, action: str, ids: list) -> None:
    response = client.post(
        f"/admin/{model}/", {"action": action, "_selected_action": [str(i) for i in ids]}, follow=True, **ORIGIN
    )
    assert response.status_code == 200


@pytest.mark.sqlite_ok
def test_job_changelist_filters_and_searches_payload_and_manga_titles(admin_client, library):
    vaga = f.dead_sync_manga("Vagabond")
    content = f.dead_content_job(library["ch1"])
    f.job(MetadataPass(source_id="demo"))
    page = admin_client.get("/admin/jobs/job/", {"q": "vagabond"})
    assert page.status_code == 200
    assert list(page.context["cl"].result_list) == [vaga]
    page = admin_client.get("/admin/jobs/job/", {"q": "berserk"})
    assert list(page.context["cl"].result_list) == [content]
    page = admin_client.get("/admin/jobs/job/", {"state__exact": "pending", "kind__exact": "metadata_pass"})
    assert [j.kind for j in page.context["cl"].result_list] == ["metadata_pass"]
    assert "Berserk — chapter 1" in admin_client.get("/admin/jobs/job/").content.decode()


@pytest.mark.sqlite_ok
def test_requeue_dead_action_revives_selected_and_audits(admin_client, staff, library):
    dead = f.dead_content_job(library["ch1"])
    pending = f.job(MetadataPass(source_id="demo"))
    act(admin_client, "jobs/job", "requeue_dead", [dead.id, pending.id])
    assert Job.objects.get(id=dead.id).state == JobState.PENDING
    audit = AuditEvent.objects.get(action="requeue_dead")
    assert (audit.actor, audit.scope, audit.target_id) == (staff, "job", str(dead.id))


@pytest.mark.sqlite_ok
def test_release_action_returns_running_job_to_pending_and_bumps_generation(admin_client, library):
    running = f.job(MetadataPass(source_id="demo"), "running", lease_generation=4, attempts=2)
    act(admin_client, "jobs/job", "release", [running.id])
    running.refresh_from_db()
    assert (running.state, running.lease_generation, running.attempts) == (JobState.PENDING, 5, 1)
    assert AuditEvent.objects.get(action="release_job").target_id == str(running.id)


@pytest.mark.sqlite_ok
def test_force_analyze_action_upgrades_pending_analyze_jobs(admin_client, library):
    pg = f.page(library["ch1"])
    job = f.job(AnalyzePage(page_id=pg.id))
    act(admin_client, "jobs/job", "force_analyze", [job.id])
    job.refresh_from_db()
    assert job.payload["force"] is True
    audit = AuditEvent.objects.get(action="force_analyze")
    assert audit.detail == {"outcome": EnqueueForPageOutcome.UPGRADED_PENDING.value}


@pytest.mark.sqlite_ok
def test_manga_requeue_action_queues_not_downloaded_chapters_ascending(admin_client, library):
    Chapter.objects.filter(id=library["ch1"].id).update(sync_state=Chapter.SyncState.DONE)
    f.chapter(library["manga"], "1.5", src=library["src"])
    act(admin_client, "catalog/manga", "requeue_chapters", [library["manga"].id])
    jobs = Job.objects.filter(kind="sync_chapter_content").order_by("created_at")
    numbers = [Chapter.objects.get(id=j.chapter_id).number for j in jobs]
    assert [str(n) for n in numbers] == ["1.50", "2.00"]
    audit = AuditEvent.objects.get(action="enqueue_content")
    assert (audit.scope, audit.target_id, audit.detail) == (
        "manga",
        str(library["manga"].id),
        {"chapters": 2, "enqueued": 2},
    )


@pytest.mark.sqlite_ok
def test_chapter_requeue_action_queues_only_selected_missing_chapters(admin_client, library):
    act(admin_client, "catalog/chapter", "requeue_chapters", [library["ch2"].id])
    assert list(Job.objects.values_list("chapter_id", flat=True)) == [library["ch2"].id]


@pytest.mark.sqlite_ok
def test_audit_log_is_read_only_in_the_admin(admin_client, staff, library):
    event = AuditEvent.objects.create(actor=staff, action="restart_browser", scope="all")
    assert admin_client.get("/admin/crawler/auditevent/").status_code == 200
    assert admin_client.get(f"/admin/crawler/auditevent/{event.id}/change/").status_code == 200  # view only
    assert admin_client.get("/admin/crawler/auditevent/add/").status_code == 403
    changed = admin_client.post(f"/admin/crawler/auditevent/{event.id}/change/", {"action": "x"}, **ORIGIN)
    assert changed.status_code == 403
    assert (
        admin_client.post(f"/admin/crawler/auditevent/{event.id}/delete/", {"post": "yes"}, **ORIGIN).status_code == 403
    )
    event.refresh_from_db()
    assert event.action == "restart_browser"


@pytest.mark.sqlite_ok
def test_end_cooldown_action_lets_workers_lease_the_source_again_and_audits(admin_client, staff, db):
    until = timezone.now() + timedelta(hours=1)
    SourceThrottle.objects.create(source_id="shelf", cooling_until=until, cooling_reason="429 (Retry-After '3600')")
    SourceThrottle.objects.create(source_id="calm")
    assert limiter.cooling_sources() == {"shelf"}
    listing = admin_client.get("/admin/crawler/sourcethrottle/").content.decode()
    assert "shelf" in listing and "Retry-After" in listing
    act(admin_client, "crawler/sourcethrottle", "end_cooldown", ["shelf", "calm"])
    assert limiter.cooling_sources() == set()
    assert SourceThrottle.objects.get(source_id="shelf").cooling_reason == ""
    event = AuditEvent.objects.get(action="end_cooldown")
    assert (event.actor, event.scope, event.target_id) == (staff, "source", "shelf")
    # The bucket is the limiter's: no one adds or deletes its rows by hand.
    assert admin_client.get("/admin/crawler/sourcethrottle/add/").status_code == 403
