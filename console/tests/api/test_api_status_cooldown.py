"""A source cooling down after a 429 shows in the status API and on the live dashboard, with when it ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from console.status.compose import compose_status
from console.tests.dashboard.test_dashboard import _open_live_dashboard, page  # noqa: F401 - the page fixture
from crawler.models import SourceThrottle
from crawler.politeness.limiter import SourceLimiter
from sources.politeness.rules import Politeness

STATUS = "/api/v1/admin/crawler/"
REASON = "http://site.test/mangas?page=1 answered 429 (Retry-After '120')"


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_the_status_api_lists_a_cooling_source_and_until_when(staff_client):
    until = SourceLimiter("target", Politeness()).cool_down(120, REASON)

    answer = staff_client.get(STATUS)

    assert answer.status_code == 200
    assert answer.json()["cooling_down"] == [{"source_id": "target", "until": until.isoformat(), "reason": REASON}]


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_a_cooldown_that_ended_is_no_longer_listed(staff_client):
    SourceThrottle.objects.create(source_id="target", cooling_until=timezone.now() - timedelta(seconds=1))
    assert staff_client.get(STATUS).json()["cooling_down"] == []


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_cooling_sources_are_listed_soonest_end_first():
    SourceLimiter("late", Politeness()).cool_down(300, "answered 429")
    SourceLimiter("soon", Politeness()).cool_down(30, "answered 503 (Retry-After '30')")
    assert [entry["source_id"] for entry in compose_status()["cooling_down"]] == ["soon", "late"]


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_the_cooling_list_is_staff_only(alice_client):
    SourceLimiter("target", Politeness()).cool_down(120, REASON)
    assert alice_client.get(STATUS).status_code == 403


@pytest.mark.browser
@pytest.mark.process
def test_the_dashboard_shows_a_cooling_source(daphne_server, staff, page):  # noqa: F811 - the fixture
    SourceLimiter("target", Politeness()).cool_down(600, REASON)
    _open_live_dashboard(page, daphne_server, staff)
    expect(page.locator("#cd-flags")).to_contain_text("Cooling down: target until")
