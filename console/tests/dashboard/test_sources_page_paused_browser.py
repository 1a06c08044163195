"""The Sources page's table and its paused notices in real headless Chromium, at desktop and phone sizes.

An operator opens the page while page downloads are paused by the disk
guard (the floor an operator set above the free space) and one source is
cooling down after a 429: each notice says why and what to do, the table's
row shows the cooldown, and both notices go once the floor is lowered and
the cooldown is over. Screenshots land in artifacts/screenshots/.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from catalog.models import Source
from console.tests.dashboard.test_sources_page_browser import SIZES, _shot, screen  # noqa: F401 - the fixture
from crawler import state_store
from crawler.models import SourceThrottle

pytestmark = [pytest.mark.browser]

REASON = "http://demo.example/mangas?page=1 answered 429 (Retry-After '600')"


def _log_in(page: Page, url: str) -> None:
    page.goto(url)
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-password")
    page.click("input[type=submit]")


def test_the_sources_table_says_why_downloads_are_paused_and_which_source_cools_down(
    live_server,
    operator,
    screen,  # noqa: F811 - the imported fixture
):
    size, page = screen
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    Source.objects.create(id="demo", name="Demo", kind="demo", base_url="http://demo.example/")
    Source.objects.create(id="calm", name="Calm", kind="demo", base_url="http://calm.example/")
    until = timezone.now() + dt.timedelta(minutes=10)
    SourceThrottle.objects.create(source_id="demo", cooling_until=until, cooling_reason=REASON)
    state_store.set_disk_floor("100%")  # no disk has as much free space as its size

    _log_in(page, live_server.url + "/admin/crawler/sources/")
    notice = page.locator("#cs-downloads-paused")
    expect(notice).to_contain_text("Free disk space")
    expect(notice).to_contain_text("is under the operator's floor (manage.py disk_floor) (100%")
    expect(notice).to_contain_text("; page downloads paused.")
    expect(notice).to_contain_text("set a lower floor with manage.py disk_floor")
    cooling = page.locator('p.cs-cooling[data-source="demo"]')
    expect(cooling).to_contain_text(
        f"Demo is cooling down: no request to it until {timezone.localtime(until):%H:%M:%S}"
    )
    expect(cooling).to_contain_text(REASON)
    expect(page.locator("p.cs-cooling")).to_have_count(1)  # the calm source has no notice
    row = page.locator('tr[data-source="demo"]')
    expect(row.locator('[data-col="cooldown"]')).to_contain_text(f"until {timezone.localtime(until):%H:%M:%S}")
    expect(page.locator('tr[data-source="calm"] [data-col="cooldown"]')).to_have_text("—")
    _shot(page, f"sources-paused-{size}.png")
    for box in (row.locator('[data-col="cooldown"]'), notice, cooling):  # long reasons wrap, nothing runs off
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth"), box
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]

    state_store.set_disk_floor("0")
    SourceThrottle.objects.filter(source_id="demo").update(cooling_until=timezone.now() - dt.timedelta(seconds=1))
    page.reload()
    expect(page.locator('tr[data-source="demo"]')).to_be_visible()
    expect(page.locator("#cs-downloads-paused")).to_have_count(0)
    expect(page.locator("p.cs-cooling")).to_have_count(0)
    _shot(page, f"sources-running-{size}.png")
    assert problems == []
