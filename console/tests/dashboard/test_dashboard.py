"""The crawler dashboard page in real headless Chromium against a live Daphne server."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from playwright.sync_api import Browser, Page, expect

from catalog.models import Manga, Source
from crawler import state_store
from crawler.payloads import SyncManga
from jobs.models import Job, JobState
from jobs.queue import enqueue

DASHBOARD = "/admin/crawler/"
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
STAFF_PASSWORD = "sam-password"
# A loaded CI machine can take a few seconds to start a worker or relay a signal.
expect.set_options(timeout=15_000)


# --- without a browser: who gets the page --------------------------------------------------


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_dashboard_sends_anonymous_and_non_staff_users_to_the_admin_login(client, alice):
    anonymous = client.get(DASHBOARD)
    assert anonymous.status_code == 302
    assert anonymous["Location"] == f"/admin/login/?next={DASHBOARD}"
    client.force_login(alice)
    reader = client.get(DASHBOARD)
    assert reader.status_code == 302
    assert reader["Location"].startswith("/admin/login/")


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_dashboard_renders_for_staff_with_the_api_routes_and_a_csrf_cookie(client, staff):
    client.force_login(staff)
    response = client.get(DASHBOARD)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    assert 'data-stream-url="/api/v1/admin/crawler/stream/"' in html
    assert 'data-requeue-url="/api/v1/admin/crawler/requeue/"' in html
    assert "console/dashboard.js" in html
    assert "csrftoken" in response.cookies


# --- in Chromium --------------------------------------------------------------------------


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def _log_in(page: Page, server, username: str, password: str) -> None:
    page.goto(server.url + DASHBOARD)
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/crawler/"))
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")


def _open_live_dashboard(page: Page, server, staff) -> None:
    _log_in(page, server, staff.username, STAFF_PASSWORD)
    expect(page).to_have_url(server.url + DASHBOARD)
    expect(page.locator("#cd-stream-state")).to_have_text("Live")


def _screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


@pytest.mark.browser
@pytest.mark.process
def test_staff_logs_in_through_the_admin_form_and_sees_the_live_dashboard(daphne_server, staff, page):
    _open_live_dashboard(page, daphne_server, staff)
    expect(page.locator("#cd-phase")).to_have_text("Idle")
    expect(page.locator("#cd-queue tbody tr[data-kind=sync_chapter_content]")).to_be_visible()
    # Static files came through: the stylesheet laid out the progress bar.
    assert page.locator("#cd-phase-progress").evaluate("el => getComputedStyle(el).borderRadius") == "7px"
    _screenshot(page, "dashboard-idle.png")


@pytest.mark.browser
@pytest.mark.process
def test_non_staff_login_does_not_reach_the_dashboard(daphne_server, alice, page):
    _log_in(page, daphne_server, "alice", "alice-password")
    # The admin login form refuses non-staff accounts and stays on the form.
    expect(page.locator(".errornote")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/admin/login/"))


@pytest.mark.browser
@pytest.mark.process
def test_a_status_change_made_by_a_worker_process_appears_without_reload(daphne_server, staff, page, status_worker):
    source = Source.objects.create(id="demo", name="Demo", kind="demo", base_url="http://127.0.0.1:1/")
    for n in range(3):
        enqueue(SyncManga(source_id=source.id, source_manga_key=f"k{n}", url="", title=f"Queued manga {n}"))
    Manga.objects.create(title="Coverless Manga")
    state_store.save_last_pass(
        source.id,
        {
            "at": "2026-01-02T03:04:05+00:00",
            "source_id": source.id,
            "discovered": 40,
            "upserted": 12,
            "covers_fetched": 9,
            "mangas_failed": 1,
            "stopped_early": True,
        },
    )
    _open_live_dashboard(page, daphne_server, staff)
    expect(page.locator("#cd-missing-covers tbody")).to_contain_text("Coverless Manga")
    expect(page.locator("#cd-last-pass dd[data-key=upserted]")).to_have_text("12")
    expect(page.locator("#cd-last-pass dd[data-key=stopped_early]")).to_have_text("yes")
    page.evaluate("window.__notReloaded = true")

    status_worker.send(
        "phase", phase={"state": "fetching_metadata", "index": 42, "total": 120, "title": "Vinland Saga"}
    )
    status_worker.send("chapter", manga_id="m1", manga_title="Vinland Saga", chapter_id="c1", chapter_number=54)
    status_worker.send("pages", chapter_id="c1", done=7, total=21)

    expect(page.locator("#cd-phase")).to_have_text("Fetching metadata")
    expect(page.locator("#cd-phase-detail")).to_have_text("Vinland Saga — 42 of 120")
    expect(page.locator("#cd-phase-progress")).to_have_attribute("aria-valuenow", "35")
    chapter = page.locator("#cd-active-chapters li[data-chapter-id=c1]")
    expect(chapter).to_contain_text("Vinland Saga — chapter 54")
    expect(chapter).to_contain_text("7 / 21 pages")
    expect(page.locator("#cd-queue tbody tr[data-kind=sync_manga] td").first).to_have_text("3")
    expect(page.locator("#cd-active-jobs tbody tr")).to_have_count(3)
    assert page.evaluate("window.__notReloaded") is True
    _screenshot(page, "dashboard-mid-crawl.png")

    status_worker.send("end_chapter")
    expect(page.locator("#cd-active-chapters")).to_contain_text("No chapter downloading.")


def _set_visibility(page: Page, state: str) -> None:
    page.evaluate(
        """state => {
            Object.defineProperty(document, "visibilityState", {value: state, configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        state,
    )


def _stream_runs_ended(server) -> int:
    return server.log().count("status broadcaster run ended")


@pytest.mark.browser
@pytest.mark.process
def test_the_stream_closes_while_the_page_is_hidden_or_hidden_away_and_reopens_on_return(daphne_server, staff, page):
    _open_live_dashboard(page, daphne_server, staff)
    ended = _stream_runs_ended(daphne_server)

    _set_visibility(page, "hidden")
    expect(page.locator("#cd-stream-state")).to_have_text("Paused")
    # The server saw its only subscriber leave.
    _wait_until(lambda: _stream_runs_ended(daphne_server) > ended)

    _set_visibility(page, "visible")
    expect(page.locator("#cd-stream-state")).to_have_text("Live")

    ended = _stream_runs_ended(daphne_server)
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: true}))")
    expect(page.locator("#cd-stream-state")).to_have_text("Paused")
    _wait_until(lambda: _stream_runs_ended(daphne_server) > ended)
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    expect(page.locator("#cd-stream-state")).to_have_text("Live")


def _wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


@pytest.mark.browser
@pytest.mark.process
def test_run_pass_click_enqueues_a_metadata_pass_and_shows_the_result(daphne_server, staff, page):
    Source.objects.create(id="demo", name="Demo", kind="demo", base_url="http://127.0.0.1:1/")
    _open_live_dashboard(page, daphne_server, staff)

    page.get_by_role("button", name="Run a metadata pass now").click()

    expect(page.locator("#cd-control-result")).to_have_text(re.compile("metadata pass enqueued", re.I))
    assert Job.objects.filter(kind="metadata_pass", payload__source_id="demo", state=JobState.PENDING).count() == 1
    # The enqueue reached the stream too: the queue count moved without a reload.
    expect(page.locator("#cd-queue tbody tr[data-kind=metadata_pass] td").first).to_have_text("1")

    page.get_by_role("button", name="Run a metadata pass now").click()
    expect(page.locator("#cd-control-result")).to_have_text(re.compile("already in flight", re.I))
    expect(page.locator("#cd-control-result")).to_have_class(re.compile("cd-error"))


@pytest.mark.browser
@pytest.mark.process
def test_inline_requeue_of_a_dead_job_makes_it_pending(daphne_server, staff, page):
    dead = enqueue(SyncManga(source_id="demo", source_manga_key="gone", url="", title="Gone Manga")).id
    Job.objects.filter(id=dead).update(state=JobState.DEAD, attempts=5, last_error="404 from source")
    enqueue(SyncManga(source_id="demo", source_manga_key="other", url="", title="Other Manga"))
    Job.objects.exclude(id=dead).update(state=JobState.DEAD, last_error="boom")
    _open_live_dashboard(page, daphne_server, staff)
    expect(page.locator("#cd-dead-jobs tbody tr")).to_have_count(2)

    page.fill("#cd-dead-search", "Gone")
    expect(page.locator("#cd-dead-jobs tbody tr")).to_have_count(1)
    page.get_by_role("button", name="Requeue Gone Manga").click()

    expect(page.locator("#cd-control-result")).to_have_text("Requeued 1 job: Gone Manga.")
    assert Job.objects.get(id=dead).state == JobState.PENDING
    assert Job.objects.exclude(id=dead).get().state == JobState.DEAD
    expect(page.locator(f"#cd-dead-jobs tbody tr[data-job-id='{dead}']")).to_have_count(0)

    # Requeue all: confirmed in its modal, every remaining dead job is pending.
    page.fill("#cd-dead-search", "")
    page.get_by_role("button", name="Requeue every dead job").click()
    expect(page.locator("#cd-requeue-all-count")).to_have_text("1")
    page.get_by_role("button", name="Confirm requeue of every dead job").click()
    expect(page.locator("#cd-control-result")).to_have_text("Requeued 1 dead job.")
    assert not Job.objects.filter(state=JobState.DEAD).exists()
    expect(page.locator("#cd-dead-jobs tbody")).to_contain_text("No dead job.")


def _focused_label(page: Page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.getAttribute('aria-label')")


@pytest.mark.browser
@pytest.mark.process
def test_restart_confirm_modal_is_cancelled_from_the_keyboard_and_returns_focus(daphne_server, staff, page):
    _open_live_dashboard(page, daphne_server, staff)
    opener = page.get_by_role("button", name="Restart the crawler browser")
    dialog = page.locator("#cd-restart-modal")

    opener.click()
    expect(dialog).to_be_visible()
    expect(dialog).to_have_attribute("role", "dialog")
    expect(dialog).to_have_attribute("aria-modal", "true")
    assert _focused_label(page) == "Cancel browser restart"
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert _focused_label(page) == "Restart the crawler browser"

    # Enter on the focused opener, Tab around the trap back to Cancel, Enter.
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    page.keyboard.press("Tab")
    assert _focused_label(page) == "Confirm browser restart"
    page.keyboard.press("Tab")
    assert _focused_label(page) == "Cancel browser restart"
    page.keyboard.press("Shift+Tab")
    assert _focused_label(page) == "Confirm browser restart"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    assert _focused_label(page) == "Restart the crawler browser"
    assert state_store.browser_restart_generation() == 0

    # The requeue-all modal opens with Cancel focused as well.
    page.get_by_role("button", name="Requeue every dead job").click()
    assert _focused_label(page) == "Cancel requeue all"
    page.keyboard.press("Escape")

    # Confirming does reach the API.
    opener.click()
    page.get_by_role("button", name="Confirm browser restart").click()
    expect(page.locator("#cd-control-result")).to_have_text("Browser restart requested (generation 1).")
    assert state_store.browser_restart_generation() == 1


@pytest.mark.browser
@pytest.mark.process
def test_session_refresh_modal_stores_the_value_from_a_password_field(daphne_server, staff, page):
    Source.objects.create(id="demo", name="Demo", kind="demo", base_url="http://127.0.0.1:1/")
    state_store.set_session_expired("demo", True)
    _open_live_dashboard(page, daphne_server, staff)
    expect(page.locator("#cd-flags")).to_contain_text("Session expired: demo")

    page.get_by_role("button", name="Refresh the source session cookie").click()
    field = page.locator("#cd-phpsessid")
    expect(field).to_have_attribute("type", "password")
    expect(field).to_be_focused()
    field.fill("bad value!")
    page.get_by_role("button", name="Store the new session").click()
    expect(page.locator("#cd-session-error")).to_contain_text("phpsessid")
    assert state_store.session_cookie("demo") is None

    field.fill("abc123def456")
    page.get_by_role("button", name="Store the new session").click()
    expect(page.locator("#cd-session-modal")).to_be_hidden()
    expect(page.locator("#cd-control-result")).to_have_text("Session stored for demo.")
    assert state_store.session_cookie("demo") == "abc123def456"
    assert not state_store.session_expired("demo")


@pytest.mark.browser
@pytest.mark.process
def test_a_deleted_session_sends_the_page_to_the_login_after_stream_errors(daphne_server, staff, page):
    _open_live_dashboard(page, daphne_server, staff)
    Session.objects.all().delete()
    # The stream ends at the next session check, every reconnect is refused,
    # and after five errors the status probe's 401 navigates to the login.
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/crawler/"), timeout=30_000)
