"""Adding a site by URL from the Sources page in real headless Chromium, at desktop and phone sizes.

An operator logs in through the admin's form, types a fixture Madara site's
URL, reads the detected theme and the dry run, confirms with "start the
first crawl now", and finds the source listed with its pass queued.
Screenshots of each step land in artifacts/screenshots/ (CI keeps them).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, expect

from catalog.models import Source
from crawler.models import AuditEvent
from jobs.models import Job

SCREENSHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
expect.set_options(timeout=15_000)
pytestmark = [pytest.mark.browser]


@pytest.fixture(params=list(SIZES))
def screen(request, browser: Browser) -> Iterator[tuple[str, Page]]:
    context = browser.new_context(viewport=SIZES[request.param], device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield request.param, page
    context.close()


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_an_operator_adds_a_madara_site_by_url(live_server, operator, madara_site, screen):
    size, page = screen
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    page.goto(live_server.url + "/admin/crawler/sources/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-password")
    page.click("input[type=submit]")
    expect(page.locator("#cs-sources")).to_contain_text("No source yet")
    _shot(page, f"sources-empty-{size}.png")

    page.fill("#id_url", madara_site.base_url + "/manga/crimson-tide/")
    page.get_by_role("button", name="Look at the site").click()
    expect(page.locator("#cs-detection")).to_contain_text(f"{madara_site.base_url} runs the madara theme")
    expect(page.locator("#cs-dry-run")).to_contain_text("List page 1: 2 manga(s), more pages")
    expect(page.locator("#cs-dry-run")).to_contain_text("Akai Shio | Red Tide")
    expect(page.locator("#id_name")).to_have_value("Madara Fixture")
    expect(page.locator("#id_preset")).to_have_value("madara")
    _shot(page, f"sources-dry-run-{size}.png")
    assert not Source.objects.exists()

    page.check("#id_crawl_now")
    page.get_by_role("button", name="Add source").click()
    expect(page.locator("ul.messagelist")).to_contain_text("Added Madara Fixture (madara-fixture); its first crawl")
    row = page.locator('tr[data-source="madara-fixture"]')
    expect(row.locator('[data-col="next-pass"]')).to_have_text("queued or running")
    _shot(page, f"sources-added-{size}.png")

    assert Source.objects.get().settings == {"preset": "madara"}
    assert Job.objects.get(kind="metadata_pass").payload["source_id"] == "madara-fixture"
    assert AuditEvent.objects.filter(action="add_source", actor=operator).count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert problems == []
