"""Challenge passes on the dashboard (status API, Sources page), and the Sources page's probe of a challenged site.

The web process runs no browser: it passes a challenge through the configured
FlareSolverr-compatible solver, or says what to configure.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from catalog.models import Source
from console.tests.dashboard.test_dashboard import _open_live_dashboard, page  # noqa: F401 - the page fixture
from crawler.clearance import rows as clearance_store
from crawler.models import SourceClearance
from sources.clearance.records import Clearance, ClearanceCookie
from testsupport import api_factories as f
from testsupport.challenge_site import ChallengedMadaraSite, SolverStandIn

SECRET = "s3cr3t-clearance-value"
STATUS = "/api/v1/admin/crawler/"
SOURCES = "/admin/crawler/sources/"
ADD = SOURCES + "add/"


@pytest.fixture
def client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(operator)
    return client


def _passed(source_id: str) -> None:
    f.source(source_id, settings={"preset": "madara"})
    cookies = (ClearanceCookie("cf_clearance", SECRET, "site.test", expires=4_102_444_800.0),)  # 2100-01-01
    clearance_store.seed(source_id, Clearance(cookies, "Mozilla/5.0 Chrome/156.0.0.0", "browser"))
    clearance_store.DatabaseStore().record_failure(source_id, owner=None, message="the solver did not answer")


@pytest.mark.django_db
def test_the_status_api_shows_each_sources_passes_how_and_until_when_but_never_a_cookie_value(staff_client):
    _passed("shielded")
    answer = staff_client.get(STATUS)
    assert answer.status_code == 200
    [entry] = answer.json()["challenges"]
    assert entry["source_id"] == "shielded" and entry["passes"] == 1 and entry["via"] == "browser"
    assert entry["cookies"] == ["cf_clearance"] and entry["expires_at"].startswith("2100-01-01")
    assert entry["valid"] is True and entry["pass_in_flight"] is False
    assert entry["last_failure"] == "the solver did not answer" and entry["last_failure_at"]
    assert SECRET not in answer.content.decode()


@pytest.mark.django_db
def test_the_sources_page_shows_the_challenge_column(client):
    _passed("shielded")
    f.source("plain", settings={"preset": "madara"})
    html = client.get(SOURCES).content.decode()
    row = html.split('<tr data-source="shielded"')[1].split("</tr>")[0]
    cell = row.split('data-col="challenge"')[1].split("</td>")[0]
    assert "1 pass, last" in cell and "via the browser" in cell and "cookie until 2100-01-01" in cell
    assert "the solver did not answer" in cell
    assert SECRET not in html
    plain = html.split('<tr data-source="plain"')[1].split("</tr>")[0]
    assert plain.split('data-col="challenge"')[1].split("</td>")[0].strip().endswith("—")


@pytest.fixture
def challenged_site() -> Iterator[ChallengedMadaraSite]:
    site = ChallengedMadaraSite()
    yield site
    site.stop()


@pytest.mark.django_db(transaction=True)
def test_the_sources_page_probe_passes_a_challenge_through_the_solver(client, challenged_site, settings):
    solver = SolverStandIn()
    try:
        settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
        html = client.post(ADD, {"step": "detect", "url": challenged_site.base_url + "/"}).content.decode()
    finally:
        solver.stop()
    assert f"{challenged_site.base_url} runs the madara theme (" in html
    assert "List page 1: 2 manga(s), more pages" in html
    # The probe's pass served the dry run too: one ask of the solver, nothing kept of the preview.
    assert len(solver.requests) == 1
    assert not Source.objects.exists() and not SourceClearance.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_without_a_solver_the_sources_page_says_the_site_is_behind_a_challenge_and_what_to_configure(
    client, challenged_site, settings
):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = ""
    html = client.post(ADD, {"step": "detect", "url": challenged_site.base_url + "/"}).content.decode()
    assert "cloudflare JavaScript challenge" in html
    assert "CRAWLER_CHALLENGE_SOLVER_URL" in html and "requires_browser" in html
    assert "session expired" not in html


@pytest.mark.browser
@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_the_live_dashboard_shows_a_sources_challenge_passes_and_last_failure(daphne_server, staff, page):  # noqa: F811
    _passed("shielded")
    SourceClearance.objects.filter(source_id="shielded").update(
        last_failure_at=timezone.now() + timedelta(seconds=5)  # the failure came after the pass
    )
    _open_live_dashboard(page, daphne_server, staff)
    flags = page.locator("#cd-flags")
    expect(flags).to_contain_text("Challenge shielded: 1 pass, last")
    expect(flags).to_contain_text("via the browser, cookie until")
    expect(flags).to_contain_text("last failure")
    expect(flags).to_contain_text("the solver did not answer")
    assert SECRET not in page.content()
