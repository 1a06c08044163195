"""The shared Chromium: the html adapter through a real browser, the SSRF guard there, the restart gate."""

from __future__ import annotations

import threading

import pytest

from catalog.models import Source
from crawler import state_store
from crawler.factory import get_source
from crawler.politeness import limiter
from demo.site.throttle import ServerThrottle
from sources.browser import BrowserManager
from sources.demo import demo_settings
from sources.errors import FetchRefused, NotFound, SessionExpired, SourceCoolingDown, SourceUnavailable

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def shared_browser():
    """One Chromium for the read-only tests of this module (launching costs a couple of seconds)."""
    manager = BrowserManager()
    yield manager
    manager.close()


@pytest.fixture
def browser_source(demo_site):
    return Source.objects.create(
        id="target",
        name="Target",
        kind=Source.Kind.HTML,
        base_url=demo_site.base_url,
        settings=demo_settings(requires_browser=True),
    )


def _wait_for(predicate, what: str) -> None:
    """Poll a condition another thread will make true (bounded so a bug fails instead of hanging)."""
    done = threading.Event()
    for _ in range(500):
        if predicate():
            return
        done.wait(0.02)
    raise AssertionError(f"never became true: {what}")


def test_html_adapter_walks_the_demo_site_through_chromium(demo_site, browser_source, shared_browser):
    source = get_source(browser_source, browser=shared_browser)
    refs, has_next = source.list_page(1)
    assert [r.key for r in refs] == [m.key for m in demo_site.catalog[:10]] and has_next
    detail = source.manga_detail(refs[0])
    manga = demo_site.catalog[0]
    assert detail.metadata.title == manga.title
    assert [c.number for c in detail.chapters] == [c.number for c in manga.chapters]
    urls = source.chapter_pages(detail.chapters[0])
    assert len(urls) == manga.chapters[0].pages
    stream = source.open_image(urls[0])
    try:
        assert sum(len(chunk) for chunk in stream.iter_bytes()) > 0
    finally:
        stream.close()
    # Chromium loaded the markup only; the one image request was plain HTTP from the adapter.
    assert len(demo_site.hits("/img/")) == 1
    assert shared_browser.state == "running"


def test_phpsessid_reaches_chromium_and_the_image_fetch(demo_site, browser_source, shared_browser):
    demo_site.require_session = "browser-sess-42"
    with pytest.raises(SessionExpired):
        get_source(browser_source, browser=shared_browser).list_page(1)
    state_store.store_session_cookie("target", "browser-sess-42")
    demo_site.requests.clear()
    source = get_source(browser_source, browser=shared_browser)
    refs, _ = source.list_page(1)
    url = source.chapter_pages(source.manga_detail(refs[0]).chapters[0])[0]
    source.open_image(url).close()
    paths = [hit.path.split("/")[1].split("?")[0] for hit in demo_site.requests]
    assert paths == ["mangas", "manga", "manga", "img"]
    assert all(hit.cookies == {"PHPSESSID": "browser-sess-42"} for hit in demo_site.requests)


def test_browser_refuses_an_off_host_redirect_before_requesting_it(
    demo_site, demo_site_factory, browser_source, shared_browser
):
    bystander = demo_site_factory(mangas=1)
    source = get_source(browser_source, browser=shared_browser)
    chapter = demo_site.catalog[0].chapters[0]
    demo_site.faults.redirect_images_to = bystander.base_url
    url = demo_site.url(f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}")
    with pytest.raises(FetchRefused, match="refusing redirect"):
        shared_browser.render(url, url_allowed=source.guard.allows)
    assert bystander.requests == []


def test_detail_404_through_chromium_is_not_found(demo_site, browser_source, shared_browser):
    source = get_source(browser_source, browser=shared_browser)
    refs, _ = source.list_page(1)
    demo_site.faults.detail_404 = {refs[0].key}
    with pytest.raises(NotFound):
        source.manga_detail(refs[0])


def test_restart_drains_in_flight_work_then_relaunches_and_clears_session_expired(demo_site):
    state_store.set_session_expired("target", True)
    manager = BrowserManager()
    try:
        manager.run(lambda browser: browser.version)  # launch
        entered, release = threading.Event(), threading.Event()
        order: list[str] = []

        def slow_work(browser):
            entered.set()
            release.wait(30)
            order.append("in-flight work finished")
            return browser.is_connected()

        worker = threading.Thread(target=manager.run, args=(slow_work,))
        worker.start()
        entered.wait(30)
        restarter = threading.Thread(target=lambda: (manager.restart(), order.append("restarted")))
        restarter.start()
        _wait_for(lambda: manager.state == "restarting", "restart gate closed")
        # While draining: no relaunch yet, the flag is still set, and a newcomer waits at the gate.
        late = threading.Thread(target=lambda: manager.run(lambda b: order.append(f"late user saw {manager.restarts}")))
        late.start()
        assert manager.restarts == 0 and state_store.session_expired("target") is True
        assert restarter.is_alive() and late.is_alive()
        release.set()
        for thread in (worker, restarter, late):
            thread.join(60)
        assert order[0] == "in-flight work finished"
        assert sorted(order[1:]) == ["late user saw 1", "restarted"]
        assert manager.restarts == 1 and manager.state == "running"
        assert state_store.session_expired("target") is False
    finally:
        manager.close()


def test_restart_that_cannot_drain_gives_up_and_keeps_the_browser(demo_site):
    manager = BrowserManager()
    try:
        entered, release = threading.Event(), threading.Event()
        worker = threading.Thread(target=manager.run, args=(lambda b: (entered.set(), release.wait(30)),))
        worker.start()
        entered.wait(30)
        with pytest.raises(SourceUnavailable, match="still in flight"):
            manager.restart(drain_timeout=0.1)
        release.set()
        worker.join(30)
        assert manager.state == "running" and manager.restarts == 0
        assert manager.run(lambda b: b.is_connected()) is True
    finally:
        manager.close()


def test_consecutive_browser_failures_trigger_an_automatic_restart(demo_site):
    manager = BrowserManager(restart_threshold=3)
    try:
        url = demo_site.url("/mangas?page=1")
        assert "manga-link" in manager.render(url).html
        manager.run(lambda browser: browser.close())  # the browser dies under us
        for expected_failures in (1, 2):
            with pytest.raises(SourceUnavailable):
                manager.render(url)
            assert manager.consecutive_failures == expected_failures and manager.restarts == 0
        with pytest.raises(SourceUnavailable):
            manager.render(url)  # the third failure restarts it
        assert manager.restarts == 1 and manager.consecutive_failures == 0
        assert "manga-link" in manager.render(url).html
    finally:
        manager.close()


def test_an_unreachable_site_is_not_a_browser_failure():
    manager = BrowserManager(restart_threshold=1)
    try:
        with pytest.raises(SourceUnavailable, match="ERR_CONNECTION_REFUSED"):
            manager.render("http://127.0.0.1:9/")
        assert manager.restarts == 0 and manager.consecutive_failures == 0
    finally:
        manager.close()


def test_closed_manager_refuses_work():
    manager = BrowserManager()
    manager.close()
    assert manager.state == "stopped"
    with pytest.raises(SourceUnavailable, match="shut down"):
        manager.run(lambda browser: None)
    with pytest.raises(SourceUnavailable, match="shut down"):
        manager.restart()


def test_a_429_to_a_browser_navigation_cools_the_source_down_for_every_request(
    demo_site, browser_source, shared_browser, settings
):
    settings.CRAWLER_COOLDOWN_WAIT_SECS = 0
    demo_site.throttle = ServerThrottle(always=True, retry_after_secs=30)
    source = get_source(browser_source, browser=shared_browser)
    with pytest.raises(SourceCoolingDown, match=r"answered 429 \(Retry-After '30'\)"):
        source.list_page(1)
    asked = len(demo_site.throttle.arrivals)
    # Neither the next navigation nor a plain-HTTP image fetch goes out while it cools.
    with pytest.raises(SourceCoolingDown, match="is cooling down until"):
        source.list_page(2)
    with pytest.raises(SourceCoolingDown):
        source.open_image(demo_site.url("/img/covers/x.png"))
    assert len(demo_site.throttle.arrivals) == asked
    assert limiter.cooling_sources() == {browser_source.id}
