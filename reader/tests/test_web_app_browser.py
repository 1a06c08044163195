"""The web app as a person sees it, in real headless Chromium at desktop (1280×800) and phone (390×844) sizes.

Each test checks what is on screen (element boxes against the viewport,
computed colours, which page images are shown) and saves a screenshot per
size under artifacts/screenshots/ (kept by CI). One browser serves the
module; each size gets a fresh context signed in by session cookie.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from catalog.models import Bookmark
from reader.models import ReaderPreference, ReadProgress
from reader.tests import factories as f

SHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
expect.set_options(timeout=15_000)
pytestmark = [pytest.mark.browser]


@pytest.fixture
def session_cookie(alice, live_server) -> dict[str, str]:
    client = Client()
    client.force_login(alice)
    return {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value}


@pytest.fixture
def sized(browser: Browser, live_server, session_cookie) -> Callable[..., Iterator[tuple[str, Page]]]:
    """Yield (size name, signed-in page) for each size; the page's context closes after its turn."""

    def each(color_scheme: str = "light") -> Iterator[tuple[str, Page]]:
        for name, (width, height) in SIZES.items():
            context = browser.new_context(
                viewport={"width": width, "height": height}, device_scale_factor=1, color_scheme=color_scheme
            )
            context.add_cookies([{**session_cookie, "url": live_server.url}])
            page = context.new_page()
            page.set_default_timeout(15_000)
            try:
                yield name, page
            finally:
                context.close()

    return each


def shot(page: Page, scenario: str, size: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{scenario}-{size}.png"))


def box(page: Page, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not on screen"
    return found


def visible_pages(page: Page) -> list[int]:
    return page.eval_on_selector_all(
        "#pages img", "imgs => imgs.filter(i => i.offsetParent !== null).map(i => Number(i.dataset.page))"
    )


def wait_loaded(page: Page, selector: str = "#pages img:not([hidden])") -> None:
    page.wait_for_function(
        "s => [...document.querySelectorAll(s)].every(i => i.complete && i.naturalWidth > 0)", arg=selector
    )


def background(page: Page, selector: str) -> str:
    return page.eval_on_selector(selector, "e => getComputedStyle(e).backgroundColor")


def unlabelled(page: Page) -> list[str]:
    """Controls a screen reader could not name: no label, no aria-label, no text."""
    return page.eval_on_selector_all(
        "button, select, input:not([type=hidden]), a[href]",
        """els => els.filter(e => !((e.labels && e.labels.length) || e.getAttribute('aria-label')
                                    || e.textContent.trim() || e.querySelector('img[alt]:not([alt=""])')))
                   .map(e => e.outerHTML.slice(0, 80))""",
    )


def remember(page: Page, manga_id: object, **choices: object) -> None:
    """Open the reader with these choices, as if the reader had made them for this manga before."""
    import json

    page.add_init_script(f"localStorage.setItem('reader.manga.{manga_id}', {json.dumps(json.dumps(choices))})")


def test_library_shelves_badges_and_progress_bars(live_server, alice, sized):
    src = f.source("demo")
    now = timezone.now()
    berserk = f.manga("Berserk", src=src, cover=True, latest_chapter_at=now)
    chapters = [f.chapter(berserk, n, src=src, pages=4) for n in (1, 2, 3, 4)]
    for n in range(6):
        f.manga(f"Series {n}", src=src, cover=n % 2 == 0, latest_chapter_at=now - timedelta(days=n + 1))
    ReadProgress.objects.create(user=alice, chapter=chapters[0], last_page=4, completed=True)
    ReadProgress.objects.create(user=alice, chapter=chapters[1], last_page=2)
    Bookmark.objects.create(user=alice, manga=berserk)

    for size, page in sized():
        remember(page, berserk.id, mode="paged")
        page.goto(live_server.url + "/")
        width = SIZES[size][0]
        shelves = page.locator("section.shelf h2")
        expect(shelves).to_have_text(["Continue reading", "Bookmarks with new chapters", "Recently updated"])
        resume = page.locator("#shelf-continue a").first
        expect(resume).to_have_attribute("href", f"/read/{chapters[1].id}/?page=2")
        card = page.locator(f'#library-grid a[href="/mangas/{berserk.id}/"]')
        expect(card.locator(".badge")).to_have_text("3 unread")
        bar, filled = card.locator(".progress").bounding_box(), card.locator(".progress > span").bounding_box()
        assert bar and filled and abs(filled["width"] / bar["width"] - 0.25) < 0.02  # 1 of 4 read
        assert background(page, f'#library-grid a[href="/mangas/{berserk.id}/"] .badge') == "rgb(198, 40, 40)"
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the side
        assert box(page, "header.top")["height"] <= 100  # two rows at most, on a phone too
        cards = page.locator("#library-grid .card").all()
        assert all(c.bounding_box()["width"] <= width for c in cards)
        shot(page, "library-shelves", size)
        assert unlabelled(page) == []
        page.keyboard.press("Tab")  # the skip link comes first and shows itself
        assert page.evaluate("document.activeElement.className") == "skip"
        assert box(page, ".skip")["x"] >= 0
        resume.click()
        expect(page.locator("#position")).to_have_text("Page 2 of 4")  # where it was left


def _chapter(manga, number: int, src, sizes: list[tuple[int, int]], title: str = ""):
    row = f.chapter(manga, number, src=src, title=title)
    for index, (width, height) in enumerate(sizes):
        f.page(row, index, f.image_bytes(width, height, color=(40 * index % 255, 120, 200)))
    row.sync_state = "done"
    row.save(update_fields=["sync_state"])
    return row


def test_fit_modes_immersive_slider_and_help_at_both_sizes(live_server, sized):
    src = f.source("demo")
    manga = f.manga("Fits", src=src)
    chapter = _chapter(manga, 1, src, [(600, 900)] * 3)

    for size, page in sized():
        width, height = SIZES[size]
        remember(page, manga.id, mode="paged")
        page.goto(f"{live_server.url}/read/{chapter.id}/")
        expect(page.locator("#pages")).to_have_attribute("data-fit", "height")  # paged opens fitting the height
        wait_loaded(page)
        shown = box(page, "#pages img:not([hidden])")
        assert abs(shown["height"] - height) <= 1 and shown["width"] <= width
        assert background(page, "#fit-height") != background(page, "#fit-width")  # pressed looks pressed
        shot(page, "reader-fit-height", size)

        page.keyboard.press("w")
        expect(page.locator("#fit-width")).to_have_attribute("aria-pressed", "true")
        wait_loaded(page)
        shown = box(page, "#pages img:not([hidden])")
        assert abs(shown["width"] - width) <= 1 and abs(shown["height"] - width * 1.5) <= 2
        shot(page, "reader-fit-width", size)

        page.keyboard.press("o")
        expect(page.locator("#pages")).to_have_attribute("data-fit", "original")
        wait_loaded(page)
        assert page.eval_on_selector("#pages img:not([hidden])", "i => i.naturalWidth") == 600  # the stored page
        shown = box(page, "#pages img:not([hidden])")
        assert (round(shown["width"]), round(shown["height"])) == (600, 900)
        shot(page, "reader-fit-original", size)

        # A tap in the middle hides every toolbar; the page fills the screen.
        page.keyboard.press("h")
        wait_loaded(page)
        bar = box(page, "#reader-bar")
        if size == "phone":
            assert bar["height"] <= 50  # one short row: the options fold away
            expect(page.locator("#reader-options")).to_be_hidden()
        shot(page, "reader-chrome", size)
        assert unlabelled(page) == []
        page.mouse.click(width / 2, height / 2)
        expect(page.locator("#reader-bar")).to_be_hidden()
        expect(page.locator("#reader-foot")).to_be_hidden()
        shown = box(page, "#pages img:not([hidden])")
        assert abs(shown["height"] - height) <= 1 and shown["y"] >= -1
        expect(page.locator("#position")).to_be_hidden()
        shot(page, "reader-immersive", size)
        page.mouse.click(width / 2, height / 2)
        expect(page.locator("#reader-bar")).to_be_visible()
        # The page slider jumps, and `?` opens the keyboard help.
        page.locator("#slider").fill("3")
        expect(page.locator("#position")).to_have_text("Page 3 of 3")
        page.keyboard.press("?")
        expect(page.locator("#help")).to_be_visible()
        expect(page.locator("#help")).to_contain_text("Fit width, fit height, original size")
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()


def test_two_page_spreads_leave_wide_pages_alone_and_right_to_left_reads_from_the_right(live_server, sized):
    src = f.source("demo")
    manga = f.manga("Spreads", src=src)
    chapter = _chapter(manga, 1, src, [(300, 450), (300, 450), (300, 450), (900, 450), (300, 450), (300, 450)])
    rtl_src = f.source("rtl", reading_direction="rtl")
    rtl_manga = f.manga("Right To Left", src=rtl_src)
    rtl_chapter = _chapter(rtl_manga, 1, rtl_src, [(300, 450)] * 5)

    for size, page in sized():
        width, height = SIZES[size]
        remember(page, manga.id, mode="paged", spread=True, direction="ltr")
        page.goto(f"{live_server.url}/read/{chapter.id}/")
        expect(page.locator("#spread")).to_have_attribute("aria-pressed", "true")
        assert visible_pages(page) == [1]  # the cover stands alone
        page.keyboard.press("ArrowRight")
        expect(page.locator("#position")).to_have_text("Pages 2–3 of 6")
        assert visible_pages(page) == [2, 3]
        wait_loaded(page)
        left, right = box(page, 'img[data-page="2"]'), box(page, 'img[data-page="3"]')
        assert left["x"] + left["width"] <= right["x"] + 1  # side by side, 2 on the left
        assert left["x"] >= 0 and right["x"] + right["width"] <= width + 1 and right["height"] <= height + 1
        shot(page, "reader-spread", size)
        page.keyboard.press("ArrowRight")
        expect(page.locator("#position")).to_have_text("Page 4 of 6")
        assert visible_pages(page) == [4]  # a wide page is a spread by itself
        page.keyboard.press("ArrowRight")
        assert visible_pages(page) == [5, 6]

        # Right to left (the source's direction): ArrowLeft and the left third go forward, 2 sits right of 3.
        remember(page, rtl_manga.id, mode="paged", spread=True)
        page.goto(f"{live_server.url}/read/{rtl_chapter.id}/")
        expect(page.locator("#direction")).to_have_attribute("aria-pressed", "true")
        page.keyboard.press("ArrowRight")  # backwards in right-to-left: stays on the first page
        assert visible_pages(page) == [1]
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#position")).to_have_text("Pages 2–3 of 5")
        wait_loaded(page)
        first, second = box(page, 'img[data-page="2"]'), box(page, 'img[data-page="3"]')
        assert second["x"] + second["width"] <= first["x"] + 1
        assert page.eval_on_selector("#slider", "s => s.dir") == "rtl"
        shot(page, "reader-rtl", size)
        page.mouse.click(width * 0.1, height / 2)
        expect(page.locator("#position")).to_have_text("Pages 4–5 of 5")


def test_webtoon_mode_is_one_strip_without_gaps(live_server, sized):
    src = f.source("demo")
    manga = f.manga("Long Strip", src=src)
    chapter = _chapter(manga, 1, src, [(400, 1200)] * 4)  # long strips: opens as a webtoon

    for size, page in sized():
        width = SIZES[size][0]
        page.goto(f"{live_server.url}/read/{chapter.id}/")
        expect(page.locator("#pages")).to_have_attribute("data-mode", "webtoon")
        expect(page.locator("#mode-webtoon")).to_have_attribute("aria-pressed", "true")
        page.evaluate("document.querySelectorAll('#pages img').forEach(i => { i.loading = 'eager'; })")
        wait_loaded(page, "#pages img")
        boxes = page.eval_on_selector_all(
            "#pages img",
            "imgs => imgs.map(i => { const b = i.getBoundingClientRect(); return [b.top, b.bottom, b.width]; })",
        )
        assert all(abs(boxes[i + 1][0] - boxes[i][1]) < 0.5 for i in range(3)), boxes  # no gaps
        assert all(abs(b[2] - min(width, 800)) <= 1 for b in boxes)
        page.mouse.click(width / 2, 400)  # immersive: the strip alone
        expect(page.locator("#reader-bar")).to_be_hidden()
        shot(page, "reader-webtoon", size)


def test_the_end_of_a_chapter_shows_a_card_and_the_next_chapter_is_already_loading(live_server, sized):
    src = f.source("demo")
    manga = f.manga("The Tower", src=src)
    current = _chapter(manga, 12, src, [(600, 900)] * 2)
    following = _chapter(manga, 13, src, [(600, 900)] * 4, title="The Gate")
    # A page is asked for by its signed URL (which names its stored file) or by its id.
    next_pages = [(str(p.id), p.image.name) for p in following.pages.order_by("index")[:3]]

    for size, page in sized():
        requested: list[str] = []
        page.on("request", lambda request, seen=requested: seen.append(request.url))
        remember(page, manga.id, mode="paged")
        page.goto(f"{live_server.url}/read/{current.id}/")
        wait_loaded(page)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        card = page.locator("#end-card")
        expect(card).to_be_visible()
        expect(card.locator("h2")).to_have_text("Next: Chapter 13: The Gate")
        assert visible_pages(page) == []
        assert page.url.endswith(f"/read/{current.id}/")  # the card, not a jump to the next chapter
        page.wait_for_function("document.querySelector('#pages').dataset.nextPreloaded === '3'")
        page.wait_for_timeout(100)
        assert all(any(pid in url or name in url for url in requested) for pid, name in next_pages), requested
        shot(page, "reader-end-card", size)
        page.keyboard.press("ArrowRight")
        expect(page).to_have_url(f"{live_server.url}/read/{following.id}/")
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        expect(page.locator("#end-card h2")).to_have_text("You're caught up")
        shot(page, "reader-caught-up", size)


def test_dark_mode_follows_the_system_and_the_toggle_is_kept_for_the_user(live_server, alice, sized):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src, cover=True, latest_chapter_at=timezone.now())
    f.chapter(manga, 1, src=src, pages=1)

    for size, page in sized(color_scheme="dark"):
        ReaderPreference.objects.filter(user=alice).delete()
        page.goto(live_server.url + "/")
        assert background(page, "body") == "rgb(18, 19, 22)"  # the system is dark: so are we
        assert page.eval_on_selector("body", "e => getComputedStyle(e).color") == "rgb(231, 231, 236)"
        assert background(page, ".card a") == "rgb(28, 29, 34)"
        expect(page.locator("#theme-toggle")).to_have_attribute("aria-pressed", "true")
        shot(page, "dark-mode-library", size)
        page.goto(f"{live_server.url}/mangas/{manga.id}/")
        shot(page, "dark-mode-manga", size)
        # Per-chapter read marks: one click flips the row (desktop marks it read, the phone back to unread).
        before = page.locator(".chapters .state").inner_text()
        page.locator(".chapters button[name=state]").click()
        expect(page.locator(".chapters .state")).to_have_text("Unread" if before == "Read" else "Read")

        page.click("#theme-toggle")  # light, stored for the user
        expect(page.locator("html")).to_have_attribute("data-theme", "light")
        assert background(page, "body") == "rgb(250, 250, 250)"
        assert ReaderPreference.objects.get(user=alice).theme == "light"

    for size, page in sized(color_scheme="light"):
        ReaderPreference.objects.update_or_create(user=alice, defaults={"theme": "dark"})
        page.goto(live_server.url + "/")  # another device, a light system: the user's dark choice wins
        assert background(page, "body") == "rgb(18, 19, 22)"
        expect(page.locator("#theme-toggle")).to_have_attribute("aria-pressed", "true")
        shot(page, "dark-mode-chosen", size)
