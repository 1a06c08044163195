"""One Playwright Chromium per crawl-worker process: shared, exclusive, restartable.

Playwright's sync objects belong to the thread that created them, while the
crawl worker runs several job threads. So the manager owns one dedicated
thread that starts Playwright, launches Chromium and executes every piece of
submitted work in turn: access is serialised by construction, and no
Playwright object ever crosses a thread.

Restart is a coordinated gate (seed 001 "coordinated_restart"): new users
wait, in-flight users drain, the browser relaunches, and on success the
sticky `session_expired` flags are cleared (the operator restarts after
refreshing the session). After `restart_threshold` consecutive browser
failures the manager restarts itself.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urljoin

from django.conf import settings
from playwright.sync_api import Browser, Playwright, Route, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from crawler.errors import FetchRefused, SourceUnavailable

logger = logging.getLogger(__name__)

T = TypeVar("T")
# Pages are rendered for their markup only; images stream over HTTP separately.
_BLOCKED_RESOURCES = frozenset({"image", "media", "font"})
_MAX_REDIRECTS = 5
_READY_POLL_MS = 100


@dataclass(frozen=True)
class RenderedPage:
    url: str  # final URL after (guarded) redirects
    status: int | None
    html: str
    cookies: list[dict[str, Any]] = field(default_factory=list)  # the context's cookies after the load
    retry_after: str | None = None  # the answer's Retry-After header (a 429/503 cools the source down)


@dataclass
class _Work:
    fn: Callable[[Browser], Any] | None  # None = relaunch
    future: Future = field(default_factory=Future)


class BrowserManager:
    """States: "idle" (not launched yet), "running", "restarting", "stopped"."""

    def __init__(
        self,
        executable_path: str | None = None,
        args: Iterable[str] | None = None,
        restart_threshold: int | None = None,
        *,
        navigation_timeout_secs: float | None = None,
    ) -> None:
        self.executable_path = executable_path if executable_path is not None else (settings.CHROMIUM_PATH or None)
        self.args = list(args if args is not None else settings.CHROMIUM_ARGS)
        self.restart_threshold = restart_threshold or settings.CRAWLER_BROWSER_RESTART_THRESHOLD
        self.navigation_timeout_secs = navigation_timeout_secs or settings.CRAWLER_HTTP_TIMEOUT_SECS
        self._cond = threading.Condition()
        self._state = "idle"
        self._in_flight = 0
        self._restarts = 0
        self._failures = 0
        self._work: queue.Queue[_Work | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._tab: _Tab | None = None  # touched only on the browser thread

    # --- status ---------------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._state

    @property
    def restarts(self) -> int:
        return self._restarts

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def snapshot(self) -> dict[str, Any]:
        with self._cond:
            return {"state": self._state, "restarts": self._restarts, "consecutive_failures": self._failures}

    # --- use ---------------------------------------------------------------------------------

    def run(self, fn: Callable[[Browser], T]) -> T:
        """Run `fn(browser)` on the browser thread, after any restart in progress, one caller at a time.

        Never call from inside `fn` (it would wait for itself).
        """
        self._refuse_on_browser_thread("run")
        with self._cond:
            while self._state == "restarting":
                self._cond.wait()
            if self._state == "stopped":
                raise SourceUnavailable("the browser has been shut down")
            self._in_flight += 1
            self._start_thread()
        try:
            return self._submit(fn)
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def render(
        self,
        url: str,
        *,
        cookies: Iterable[dict[str, Any]] = (),
        url_allowed: Callable[[str], bool] | None = None,
        ready: Callable[[str], bool] | None = None,
        wait_secs: float = 0.0,
        network_idle: bool = False,
    ) -> RenderedPage:
        """Load `url` in the manager's tab with `cookies` added; returns the final markup.

        Pages that fill themselves by script (an ajax chapter list, a reader
        built from an inline image array) are snapshotted once `ready(html)`
        holds, or network idle is reached when asked, but never later than
        `wait_secs` after the load: a page that never gets ready is returned
        as it is, and the caller's required-selector check reports it.

        Navigation redirects are followed by hand so each hop passes
        `url_allowed` before it is requested (FetchRefused otherwise), and
        off-host subresources are never requested. Browser faults count toward
        the automatic restart; a site that cannot be reached does not.
        """
        cookies = list(cookies)
        try:
            wait = _Wait(ready, wait_secs, network_idle)
            page = self.run(lambda browser: self._render_on_thread(browser, url, cookies, url_allowed, wait))
        except PlaywrightError as exc:
            if "net::ERR_" not in str(exc):
                self.record_failure()
            raise SourceUnavailable(f"browser could not load {url}: {exc}") from exc
        self.record_success()
        return page

    # --- failures and restart -------------------------------------------------------------------

    def record_success(self) -> None:
        with self._cond:
            self._failures = 0

    def record_failure(self) -> None:
        """Count a browser failure; at the threshold, restart (from a helper thread if called on the browser thread)."""
        with self._cond:
            self._failures += 1
            due = self._failures >= self.restart_threshold and self._state in ("idle", "running")
        if not due:
            return
        logger.warning("browser: %d consecutive failures, restarting", self._failures)
        if threading.current_thread() is self._thread:
            threading.Thread(target=self._restart_quietly, name="browser-auto-restart", daemon=True).start()
        else:
            self._restart_quietly()

    def restart(self, *, drain_timeout: float | None = None) -> None:
        """Coordinated restart: block new users, drain in-flight ones, relaunch, clear session_expired.

        A restart requested while one is running waits for it instead of
        starting another. Raises SourceUnavailable if the drain times out (the
        browser keeps running) or the relaunch fails (the next use retries).
        """
        self._refuse_on_browser_thread("restart")
        with self._cond:
            if self._state == "stopped":
                raise SourceUnavailable("the browser has been shut down")
            if self._state == "restarting":
                self._cond.wait_for(lambda: self._state != "restarting")
                return
            previous, self._state = self._state, "restarting"
            if not self._cond.wait_for(lambda: self._in_flight == 0, timeout=drain_timeout):
                self._state = previous
                self._cond.notify_all()
                raise SourceUnavailable(f"browser restart gave up: {self._in_flight} user(s) still in flight")
            self._in_flight += 1  # the relaunch itself, so close() waits for it
            self._start_thread()
        try:
            self._submit(None)
        except BaseException as exc:
            self._finish_restart(success=False)
            raise SourceUnavailable(f"browser relaunch failed: {exc}") from exc
        # Cleared before the gate opens, so no waiting user sees a stale flag.
        _clear_expired_sessions()
        self._finish_restart(success=True)
        logger.info("browser: restarted (restart #%d)", self._restarts)

    def _finish_restart(self, *, success: bool) -> None:
        with self._cond:
            self._in_flight -= 1
            if self._state == "restarting":  # close() may have run meanwhile; stopped stays stopped
                self._state = "running" if success else "idle"
            if success:
                self._restarts += 1
                self._failures = 0
            self._cond.notify_all()

    def close(self) -> None:
        """Stop accepting work, let in-flight work finish, shut Chromium and Playwright down."""
        with self._cond:
            if self._state == "stopped":
                return
            self._state = "stopped"
            self._cond.notify_all()
            # Work already submitted must be queued ahead of the stop sentinel.
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=self.navigation_timeout_secs + 5)
            thread = self._thread
        if thread is not None:
            self._work.put(None)
            thread.join(timeout=30)

    def __enter__(self) -> BrowserManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the browser thread ------------------------------------------------------------------------

    def _restart_quietly(self) -> None:
        try:
            self.restart()
        except Exception as exc:  # an automatic restart must never take the caller down
            logger.warning("browser: automatic restart failed: %s", exc)

    def _refuse_on_browser_thread(self, what: str) -> None:
        if threading.current_thread() is self._thread:
            raise RuntimeError(f"BrowserManager.{what}() called from the browser thread would deadlock")

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="browser", daemon=True)
            self._thread.start()

    def _submit(self, fn: Callable[[Browser], T] | None) -> T:
        work = _Work(fn)
        self._work.put(work)
        return work.future.result()

    def _serve(self) -> None:
        playwright: Playwright | None = None
        browser: Browser | None = None
        try:
            while (work := self._work.get()) is not None:
                try:
                    if work.fn is None or browser is None:
                        self._shutdown(None, browser)
                        browser, self._tab = None, None
                        playwright = playwright or sync_playwright().start()
                        browser = self._launch(playwright)
                        with self._cond:
                            if self._state == "idle":  # a first use (not a restart) launched it
                                self._state = "running"
                    result = None if work.fn is None else work.fn(browser)
                except BaseException as exc:
                    work.future.set_exception(exc)
                else:
                    work.future.set_result(result)
        finally:
            self._shutdown(playwright, browser)
            while True:  # nothing may wait forever on a thread that has gone
                try:
                    leftover = self._work.get_nowait()
                except queue.Empty:
                    break
                if leftover is not None:
                    leftover.future.set_exception(SourceUnavailable("the browser has been shut down"))

    def _launch(self, playwright: Playwright) -> Browser:
        executable = self.executable_path
        if executable is None and not os.path.exists(playwright.chromium.executable_path):
            # No CHROMIUM_PATH and no `playwright install`: use the distribution's Chromium if there is one.
            executable = shutil.which("chromium") or shutil.which("chromium-browser")
        try:
            browser = playwright.chromium.launch(executable_path=executable, args=self.args, headless=True)
        except PlaywrightError as exc:
            raise SourceUnavailable(f"could not launch Chromium ({executable or 'bundled'}): {exc}") from exc
        logger.info("browser: launched Chromium %s", browser.version)
        return browser

    @staticmethod
    def _shutdown(playwright: Playwright | None, browser: Browser | None) -> None:
        for step in (browser.close if browser else None, playwright.stop if playwright else None):
            if step is None:
                continue
            try:
                step()
            except Exception as exc:  # a crashed browser cannot be closed cleanly; that is fine
                logger.debug("browser: shutdown step failed: %s", exc)

    def _render_on_thread(
        self,
        browser: Browser,
        url: str,
        cookies: list[dict[str, Any]],
        url_allowed: Callable[[str], bool] | None,
        wait: _Wait,
    ) -> RenderedPage:
        # Opening a context and a page costs about a second here, so one tab is
        # kept per launched browser and reused; it only ever lives on this thread.
        tab = self._tab
        if tab is None or tab.browser is not browser or tab.page.is_closed():
            if tab is not None:
                tab.close()
            tab = self._tab = _Tab(browser, self.navigation_timeout_secs)
        return tab.render(url, cookies, url_allowed, wait)


@dataclass(frozen=True)
class _Wait:
    ready: Callable[[str], bool] | None
    secs: float
    network_idle: bool


class _Tab:
    """A browser context with one page, reused across renders (browser thread only)."""

    def __init__(self, browser: Browser, timeout_secs: float) -> None:
        self.browser = browser
        self.context = browser.new_context()
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_secs * 1000)
        self._allowed: Callable[[str], bool] | None = None
        self._refused: list[str] = []
        self._final_url = [""]

    def render(
        self, url: str, cookies: list[dict[str, Any]], url_allowed: Callable[[str], bool] | None, wait: _Wait
    ) -> RenderedPage:
        self._allowed, self._refused, self._final_url = url_allowed, [], [url]
        if cookies:
            self.context.add_cookies(cookies)
        try:
            response = self.page.goto(url, wait_until="domcontentloaded")
        except PlaywrightError:
            if self._refused:
                raise FetchRefused(
                    f"browser: refusing redirect from {url} to {self._refused[0]} (off the source's hosts)"
                ) from None
            raise
        status = response.status if response else None
        html = self._settle(wait) if status is None or status < 400 else self.page.content()
        retry_after = response.headers.get("retry-after") if response else None
        return RenderedPage(self._final_url[0], status, html, self.context.cookies(), retry_after)

    def _settle(self, wait: _Wait) -> str:
        """The page's markup once it is ready (or the wait ran out)."""
        deadline = time.monotonic() + wait.secs
        if wait.network_idle and wait.secs > 0:
            try:
                self.page.wait_for_load_state("networkidle", timeout=wait.secs * 1000)
            except PlaywrightTimeoutError:
                logger.info("browser: %s did not reach network idle within %.1fs", self.page.url, wait.secs)
        html = self.page.content()
        if wait.ready is None:
            return html
        while not wait.ready(html) and time.monotonic() < deadline:
            self.page.wait_for_timeout(_READY_POLL_MS)
            html = self.page.content()
        return html

    def close(self) -> None:
        try:
            self.context.close()
        except PlaywrightError:
            pass  # its browser is already gone

    def _route(self, route: Route) -> None:
        request = route.request
        if request.is_navigation_request() and request.frame.parent_frame is None:
            return _navigate(route, request.url, self._allowed, self._refused, self._final_url)
        if request.resource_type in _BLOCKED_RESOURCES or (self._allowed and not self._allowed(request.url)):
            return route.abort("blockedbyclient")
        route.continue_()


def _navigate(
    route: Route, url: str, url_allowed: Callable[[str], bool] | None, refused: list[str], final_url: list[str]
) -> None:
    """Fetch a main-frame navigation ourselves, hop by hop, so no redirect target is requested unchecked.

    (Chromium does not route redirect targets, so letting it follow them would skip the guard.)
    """
    current = url
    for _ in range(_MAX_REDIRECTS + 1):
        try:
            response = route.fetch(url=current, max_redirects=0)
        except PlaywrightError as exc:
            # Surface as the page's own network error (net::ERR_...), not as a hang or a browser fault.
            text = str(exc)
            code = "connectionrefused" if "ECONNREFUSED" in text else "timedout" if "imeout" in text else "failed"
            return route.abort(code)
        location = response.headers.get("location")
        if not (300 <= response.status < 400 and location):
            final_url[0] = current
            return route.fulfill(response=response)
        current = urljoin(current, location)
        if url_allowed and not url_allowed(current):
            refused.append(current)
            return route.abort("blockedbyclient")
    route.abort("failed")


def _clear_expired_sessions() -> None:
    """A successful restart clears the sticky session_expired flags (seed 001)."""
    from crawler import state_store

    try:
        for source_id in state_store.expired_sessions():
            state_store.set_session_expired(source_id, False)
    except Exception as exc:  # the restart itself succeeded; a DB hiccup must not undo that
        logger.warning("browser: restarted but could not clear session_expired flags: %s", exc)
