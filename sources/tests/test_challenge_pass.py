"""JavaScript challenges passed for real: the stand-in's interstitial in Chromium, then plain httpx and libcurl.

The stand-in (`testsupport.challenge_site`) binds its clearance cookie to the
User-Agent of the browser that ran its script, so a plain request gets through
only when it presents both, as the worker's transports must.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from catalog.models import Source
from crawler import state_store
from crawler.factory import get_source
from crawler.models import SourceClearance, SourceThrottle
from sources.browser import BrowserManager
from sources.errors import ChallengeNotPassed, RetryLater, SessionExpired
from testsupport.challenge_site import COOKIE, SOLVER_USER_AGENT, ChallengedMadaraSite, SolverStandIn
from testsupport.theme_sites.expect import LOCAL_PACE

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def challenged_site() -> Iterator[ChallengedMadaraSite]:
    site = ChallengedMadaraSite()
    yield site
    site.stop()


@pytest.fixture
def browser_manager(settings) -> Iterator[BrowserManager]:
    manager = BrowserManager(executable_path=settings.CHROMIUM_PATH or "/usr/bin/chromium")
    yield manager
    manager.close()


@pytest.fixture
def solver() -> Iterator[SolverStandIn]:
    stand_in = SolverStandIn()
    yield stand_in
    stand_in.stop()


def challenged_source(site: ChallengedMadaraSite, **settings) -> Source:
    return Source.objects.create(
        id="shielded", name="Shielded", base_url=site.base_url, settings={"preset": "madara", **LOCAL_PACE, **settings}
    )


def read_one_chapter(source) -> tuple[list, list[bytes]]:
    refs, _ = source.list_page(1)
    detail = source.manga_detail(refs[0])
    pages = source.chapter_pages(detail.chapters[0])
    images = []
    for url in pages:
        stream = source.open_image(url)
        try:
            images.append(b"".join(stream.iter_bytes()))
        finally:
            stream.close()
    return refs, images


@pytest.mark.browser
def test_chromium_passes_the_challenge_then_plain_pages_and_images_carry_its_cookie_and_user_agent(
    challenged_site, browser_manager
):
    row = challenged_source(challenged_site)
    source = get_source(row, browser=browser_manager)
    try:
        refs, images = read_one_chapter(source)
    finally:
        source.close()
    first = challenged_site.catalog[0]
    assert [r.key for r in refs][:1] == [first.slug]
    assert images == list(first.chapters[-1].pages) or images == list(first.chapters[0].pages)
    stored = SourceClearance.objects.get(source_id="shielded")
    assert (stored.passes, stored.via) == (1, "browser")
    assert [c["name"] for c in stored.cookies] == [COOKIE]
    assert stored.expires_at is not None
    agent = stored.user_agent
    assert "Chrome/" in agent and "HeadlessChrome" not in agent
    # Every request that got through the shield presented the browser's User-Agent, the plain ones included.
    assert set(challenged_site.cleared_agents()) == {agent}
    # Two interstitials: the first plain request's, and the one the browser ran. None after.
    assert challenged_site.challenges_served == 2
    # The next job (another adapter, as on another worker) starts with the stored pass: no challenge, no pass.
    again = get_source(row)  # no browser at all: it could not pass, and does not need to
    try:
        read_one_chapter(again)
    finally:
        again.close()
    assert challenged_site.challenges_served == 2
    assert SourceClearance.objects.get(source_id="shielded").passes == 1


def test_without_a_browser_the_solver_passes_and_plain_requests_carry_its_cookie_and_user_agent(
    challenged_site, solver, settings
):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
    settings.CRAWLER_CHALLENGE_WAIT_SECS = 20
    row = challenged_source(challenged_site)
    source = get_source(row)
    try:
        _, images = read_one_chapter(source)
    finally:
        source.close()
    assert images and all(image.startswith(b"\x89PNG") for image in images)
    # One request.get, shaped as FlareSolverr's README has it.
    assert solver.requests == [
        {"cmd": "request.get", "url": f"{challenged_site.base_url}/manga/page/1/?m_orderby=latest", "maxTimeout": 20000}
    ]
    stored = SourceClearance.objects.get(source_id="shielded")
    assert (stored.passes, stored.via, stored.user_agent) == (1, "solver", SOLVER_USER_AGENT)
    assert set(challenged_site.cleared_agents()) == {SOLVER_USER_AGENT}


@pytest.mark.browser
def test_where_chromium_does_not_get_through_in_time_the_solver_is_asked(browser_manager, solver, settings):
    site = ChallengedMadaraSite(delay_ms=60_000)  # the interstitial's script takes a minute
    try:
        settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
        settings.CRAWLER_CHALLENGE_WAIT_SECS = 2
        row = challenged_source(site)
        source = get_source(row, browser=browser_manager)
        try:
            refs, _ = source.list_page(1)
        finally:
            source.close()
        assert refs
        assert len(solver.requests) == 1
        assert SourceClearance.objects.get(source_id="shielded").via == "solver"
    finally:
        site.stop()


def test_with_no_browser_and_no_solver_the_error_names_the_challenge_the_url_and_what_to_configure(
    challenged_site, settings
):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = ""
    row = challenged_source(challenged_site)
    source = get_source(row)
    try:
        with pytest.raises(ChallengeNotPassed) as caught:
            source.list_page(1)
    finally:
        source.close()
    message = str(caught.value)
    assert "cloudflare JavaScript challenge (cf-mitigated: challenge)" in message
    assert f"{challenged_site.base_url}/manga/page/1/" in message
    assert "requires_browser" in message and "CRAWLER_CHALLENGE_SOLVER_URL" in message
    assert "session" not in message
    # Not an expired session (no sticky flag), not a dead job: the source cools down and the job is deferred.
    assert not isinstance(caught.value, SessionExpired) and isinstance(caught.value, RetryLater)
    assert SourceThrottle.objects.get(source_id="shielded").cooling_until > timezone.now()
    stored = SourceClearance.objects.get(source_id="shielded")
    assert stored.passes == 0 and "CRAWLER_CHALLENGE_SOLVER_URL" in stored.last_failure
    assert not state_store.session_expired("shielded")


def test_a_failing_solver_is_named_with_its_message_and_not_asked_again_within_the_interval(
    challenged_site, solver, settings
):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
    solver.fail = True
    row = challenged_source(challenged_site)
    source = get_source(row)
    try:
        with pytest.raises(ChallengeNotPassed, match="the solver did not get past it: .*Timeout after 30.0 seconds"):
            source.list_page(1)
    finally:
        source.close()
    # The operator lifts the cooldown; the site still challenges. The interval still holds: no second ask.
    SourceThrottle.objects.filter(source_id="shielded").update(cooling_until=None)
    solver.fail = False
    again = get_source(row)
    try:
        with pytest.raises(ChallengeNotPassed, match="the next is allowed at .*CRAWLER_CHALLENGE_PASS_INTERVAL_SECS"):
            again.list_page(1)
    finally:
        again.close()
    assert len(solver.requests) == 1
    # Once the interval is over, the next challenge is passed.
    SourceThrottle.objects.filter(source_id="shielded").update(cooling_until=None)
    SourceClearance.objects.filter(source_id="shielded").update(
        last_attempt_at=timezone.now() - timedelta(seconds=settings.CRAWLER_CHALLENGE_PASS_INTERVAL_SECS)
    )
    last = get_source(row)
    try:
        assert last.list_page(1)[0]
    finally:
        last.close()
    assert len(solver.requests) == 2


def test_concurrent_workers_wait_for_the_pass_in_flight_instead_of_each_launching_one(
    challenged_site, solver, settings
):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
    solver.delay_secs = 1.5
    row = challenged_source(challenged_site)
    results: list[object] = []

    def job() -> None:
        try:
            source = get_source(row)
            try:
                results.append(len(source.list_page(1)[0]))
            finally:
                source.close()
        except Exception as exc:  # reported by the assertion below
            results.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=job) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == [2, 2, 2, 2]
    assert len(solver.requests) == 1
    assert SourceClearance.objects.get(source_id="shielded").passes == 1


@pytest.mark.browser
def test_a_source_rendered_in_chromium_waits_past_the_challenge_instead_of_keeping_the_403_page(
    challenged_site, browser_manager
):
    row = challenged_source(challenged_site, requires_browser=True)
    source = get_source(row, browser=browser_manager)
    try:
        refs, images = read_one_chapter(source)
    finally:
        source.close()
    assert refs and images and all(image.startswith(b"\x89PNG") for image in images)
    stored = SourceClearance.objects.get(source_id="shielded")
    assert (stored.passes, stored.via) == (1, "browser")
    # The renders and the plain image requests alike went through with the browser's User-Agent.
    assert set(challenged_site.cleared_agents()) == {stored.user_agent}


def test_an_image_answered_by_a_challenge_is_passed_and_fetched_again(challenged_site, solver, settings):
    settings.CRAWLER_CHALLENGE_SOLVER_URL = solver.url
    settings.CRAWLER_CHALLENGE_PASS_INTERVAL_SECS = 1
    row = challenged_source(challenged_site)
    source = get_source(row)
    try:
        refs, _ = source.list_page(1)
        detail = source.manga_detail(refs[0])
        pages = source.chapter_pages(detail.chapters[0])
        SourceClearance.objects.update(last_attempt_at=timezone.now() - timedelta(seconds=2))
        challenged_site.forget_clearances()  # the shield voids the cookie between the reader and its images
        stream = source.open_image(pages[0])
        try:
            data = b"".join(stream.iter_bytes())
        finally:
            stream.close()
    finally:
        source.close()
    assert data.startswith(b"\x89PNG")
    assert len(solver.requests) == 2 and solver.requests[1]["url"] == pages[0]
    assert SourceClearance.objects.get(source_id="shielded").passes == 2
