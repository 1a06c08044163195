"""The web reader in real headless Chromium against a live server: log in, read, progress persists and reaches OPDS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from lxml import etree
from playwright.sync_api import Browser, Page, expect

from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD

ARTIFACTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"
PSE = {"pse": "http://vaemendis.net/opds-pse/ns"}
expect.set_options(timeout=15_000)
pytestmark = [pytest.mark.browser]


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _read_to_end(page: Page, key: str, count: int) -> None:
    for _ in range(count - 1):
        page.keyboard.press(key)
    expect(page.locator("#position")).to_have_text(f"Page {count} of {count}")
    expect(page.locator("#pages")).to_have_attribute("data-saved", str(count))


def test_log_in_read_chapters_both_ways_and_progress_persists_into_opds(live_server, alice, phone):
    src = f.source("demo", reading_direction="rtl")
    manga = f.manga("Berserk", src=src, cover=True, tags=("dark",), authors=["Kentaro Miura"], description="Guts.")
    chapters = [f.chapter(manga, n, src=src, pages=3, width=1600, height=2400) for n in (1, 2, 3)]
    f.manga("Yotsuba", src=src, cover=True)

    phone.goto(live_server.url + "/")
    expect(phone).to_have_url(live_server.url + "/login/?next=/")
    phone.fill("#id_username", "alice")
    phone.fill("#id_password", PASSWORD)
    phone.click("button[type=submit]")
    expect(phone.locator("h1")).to_have_text("Library")
    _shot(phone, "reader-library-phone.png")
    phone.get_by_role("link", name="Berserk").click()
    expect(phone.locator("h1")).to_have_text("Berserk")
    _shot(phone, "reader-manga-phone.png")

    # Chapter 1, paged, left to right (the toggle overrides the source's rtl) with the arrow keys.
    phone.get_by_role("link", name="Chapter 1", exact=True).click()
    phone.click("#options-toggle")
    phone.click("#mode-paged")
    phone.click("#direction")
    expect(phone.locator("#direction")).to_have_attribute("aria-pressed", "false")
    first = phone.locator("#pages img").first
    expect(first).to_be_visible()
    phone.wait_for_function(
        "document.querySelector('#pages img').complete && document.querySelector('#pages img').naturalWidth > 0"
    )
    assert phone.evaluate("document.querySelector('#pages img').naturalWidth") == 400  # 390 CSS px rounded up to 200s
    _read_to_end(phone, "ArrowRight", 3)
    _shot(phone, "reader-chapter-paged-phone.png")

    # Chapter 2 opens as chapter 1 was left (the choices are the manga's); `r` goes back to the source's
    # right to left: ArrowLeft, then a tap on the left third.
    phone.goto(f"{live_server.url}/read/{chapters[1].id}/")
    expect(phone.locator("#direction")).to_have_attribute("aria-pressed", "false")
    expect(phone.locator("#pages")).to_have_attribute("data-mode", "paged")
    phone.keyboard.press("r")
    expect(phone.locator("#direction")).to_have_attribute("aria-pressed", "true")
    phone.keyboard.press("ArrowLeft")
    expect(phone.locator("#position")).to_have_text("Page 2 of 3")
    box = phone.locator("#pages").bounding_box()
    phone.mouse.click(box["x"] + 40, box["y"] + 100)
    expect(phone.locator("#position")).to_have_text("Page 3 of 3")
    expect(phone.locator("#pages")).to_have_attribute("data-saved", "3")

    # Chapter 3 by scrolling in vertical mode to its last page.
    phone.goto(f"{live_server.url}/read/{chapters[2].id}/")
    phone.click("#options-toggle")
    phone.click("#mode-scroll")
    expect(phone.locator("#mode-paged")).to_have_attribute("aria-pressed", "false")
    phone.locator("#pages img").last.scroll_into_view_if_needed()
    expect(phone.locator("#pages")).to_have_attribute("data-saved", "3")
    _shot(phone, "reader-chapter-scroll-phone.png")

    phone.goto(f"{live_server.url}/mangas/{manga.id}/")
    phone.reload()
    expect(phone.locator("ol.chapters li.read")).to_have_count(3)
    expect(phone.locator("#continue")).to_have_count(0)
    assert sorted(ReadProgress.objects.filter(user=alice).values_list("last_page", "completed")) == [(3, True)] * 3

    feed = httpx.get(f"{live_server.url}/opds/mangas/{manga.id}/", auth=("alice", PASSWORD), timeout=30)
    last = etree.fromstring(feed.content).xpath("//*/@pse:lastRead", namespaces=PSE)
    assert last == ["3", "3", "3"]


def test_a_slow_progress_save_is_not_overtaken_by_the_next(live_server, alice, phone):
    """The API stores what a PUT says, so the reader sends one at a time, the furthest page last."""
    src = f.source("demo")
    chapter = f.chapter(f.manga("Monster", src=src), 1, src=src, pages=4)
    held, bodies = [], []

    def hold_the_first(route):
        bodies.append(route.request.post_data_json["last_page"])
        if not held:
            held.append(route)  # answered below, after the reader has moved on
        else:
            route.continue_()

    phone.goto(live_server.url + "/login/")
    phone.fill("#id_username", "alice")
    phone.fill("#id_password", PASSWORD)
    phone.click("button[type=submit]")
    phone.route("**/api/v1/progress/**", hold_the_first)
    phone.goto(f"{live_server.url}/read/{chapter.id}/")
    phone.click("#options-toggle")
    phone.click("#mode-paged")
    expect(phone.locator("#mode-paged")).to_have_attribute("aria-pressed", "true")
    for _ in range(3):
        phone.keyboard.press("ArrowRight")
    expect(phone.locator("#position")).to_have_text("Page 4 of 4")
    phone.wait_for_timeout(300)
    assert bodies == [1], "a second PUT went out while the first was unanswered"

    held[0].continue_()
    expect(phone.locator("#pages")).to_have_attribute("data-saved", "4")
    assert bodies == [1, 4]
    assert ReadProgress.objects.get(user=alice, chapter=chapter).last_page == 4
