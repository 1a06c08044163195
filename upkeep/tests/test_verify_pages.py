"""The verify report on the dashboard and its page: staff read it, operators run the pass and the repairs."""

from __future__ import annotations

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from crawler.models import AuditEvent
from jobs.models import Job
from upkeep.models import VerifyFinding
from upkeep.tests.library import damaged_library
from upkeep.verify.run import Options, run_verify, start_or_resume

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


@pytest.fixture
def report(settings):
    settings.VERIFY_ORPHAN_GRACE_SECS = 0
    lib = damaged_library()
    run = start_or_resume(Options(full=True))
    run_verify(run)
    return lib, run


def test_the_dashboard_shows_the_open_problems_and_links_to_the_report(client, watcher, report):
    client.force_login(watcher)
    page = client.get(reverse("crawler-dashboard")).content.decode()
    assert 'id="cd-verify"' in page and '<span data-kind="gap">1 gap</span>' in page
    assert reverse("upkeep-verify") in page


def test_staff_read_the_report_without_the_repairs(client, watcher, report):
    lib, _ = report
    client.force_login(watcher)
    page = client.get(reverse("upkeep-verify")).content.decode()
    assert lib["orphan"] in page and "Delete orphan files" not in page
    response = client.post(reverse("upkeep-verify-action", args=["orphans"]), {"confirm": "delete"})
    assert response.status_code == 403
    assert default_storage.exists(lib["orphan"])


def test_deleting_orphans_needs_the_typed_confirmation(client, operator, report):
    lib, _ = report
    client.force_login(operator)
    url = reverse("upkeep-verify-action", args=["orphans"])
    page = client.post(url, {"confirm": "yes"}, follow=True).content.decode()
    assert "Orphan files kept" in page and default_storage.exists(lib["orphan"])
    page = client.post(url, {"confirm": "delete"}, follow=True).content.decode()
    assert "1 orphan files deleted" in page and not default_storage.exists(lib["orphan"])
    assert VerifyFinding.objects.get(kind="orphan").repaired_at is not None
    assert list(AuditEvent.objects.values_list("action", "actor__username")) == [("verify_orphans", "olga")]


def test_operators_queue_damaged_chapters_and_a_pass_from_the_page(client, operator, report):
    client.force_login(operator)
    page = client.post(reverse("upkeep-verify-action", args=["requeue"]), follow=True).content.decode()
    assert "3 chapters queued for download again" in page
    client.post(reverse("upkeep-verify-action", args=["run"]), {"full": "1"})
    assert Job.objects.filter(kind="verify_library", payload__full=True).count() == 1
    assert client.post(reverse("upkeep-verify-action", args=["nonsense"])).status_code == 404
    assert client.get(reverse("upkeep-verify-action", args=["run"])).status_code == 405
