"""One Playwright Chromium per crawl-worker process: shared, exclusive, restartable.

Playwright's sync objects belong to the thread that created them, while the
crawl worker runs several job threads. So the manager owns one dedicated
thread that starts Playwright, launches Chromium and executes every piece of
submitted work in turn: access is serialised by construction, and no
Playwright object ever crosses a thread.

Restart is a coordinated gate: new users wait, in-flight users drain, the
browser relaunches, and on success the caller's `on_restart` runs before the
gate opens (the crawler clears its sticky `session_expired` flags there: the
operator restarts after refreshing the session). After `restart_threshold`
consecutive browser failures the manager restarts itself.

What one render does on that thread (cookies, guarded redirects, waiting
for a script-filled page) is `fetch.tab`; which binary is launched is
`fetch.chromium`. Everything it needs from the caller's settings comes in
through the constructor; failures are `fetch.errors` kinds, which the caller
translates (`sources.browser`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from playwright.sync_api import Browser, Playwright, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from fetch import chromium
from fetch.browser_pass import BrowserPass, pass_in_browser
from fetch.errors import Unreachable
from fetch.tab import PageLimits, RenderedPage, Tab, Wait

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class _Work:
    fn: Callable[[Browser], Any] | None  # None = relaunch
    future: Future = field(default_factory=Future)


class SharedBrowser:
    """States: "idle" (not launched yet), "running", "restarting", "stopped"."""

    def __init__(
        self,
        executable_path: str | None,
        args: Iterable[str],
        restart_threshold: int,
        *,
        navigation_timeout_secs: float,
        limits: Callable[[], PageLimits],
        on_restart: Callable[[], None] = lambda: None,
    ) -> None:
        """`executable_path` None: found by `fetch.chromium`; `limits` is read at each render."""
        self.executable_path = executable_path
        self.args = list(args)
        self.restart_threshold = restart_threshold
        self.navigation_timeout_secs = navigation_timeout_secs
        self.limits = limits
        self.on_restart = on_restart
        self.launched_executable: str | None = None  # what the last launch ran (None: Playwright's own)
        self._cond = threading.Condition()
        self._state = "idle"
        self._in_flight = 0
        self._restarts = 0
        self._failures = 0
        self._work: queue.Queue[_Work | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._tab: Tab | None = None  # touched only on the browser thread

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
                raise Unreachable("the browser has been shut down")
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
        wait = Wait(ready, wait_secs, network_idle)
        return self._counted(url, lambda browser: self._render_on_thread(browser, url, cookies, url_allowed, wait))

    def pass_challenge(
        self, url: str, *, url_allowed: Callable[[str], bool] | None = None, wait_secs: float
    ) -> BrowserPass:
        """Open `url` in a context of its own and wait (at most `wait_secs`) until its challenge reloads into
        the site (`fetch.browser_pass`); StillChallenged when it does not."""
        return self._counted(
            url,
            lambda browser: pass_in_browser(
                browser,
                url,
                url_allowed,
                wait_secs=wait_secs,
                timeout_secs=self.navigation_timeout_secs,
                limits=self.limits,
            ),
        )

    def _counted(self, url: str, fn: Callable[[Browser], T]) -> T:
        """`fn` on the browser thread, its outcome counted toward the automatic restart (an unreachable site is
        not the browser's fault: a `net::ERR_` is not counted)."""
        try:
            result = self.run(fn)
        except PlaywrightError as exc:
            if "net::ERR_" not in str(exc):
                self.record_failure()
            raise Unreachable(f"browser could not load {url}: {exc}") from exc
        self.record_success()
        return result

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
        starting another. Raises Unreachable if the drain times out (the
        browser keeps running) or the relaunch fails (the next use retries).
        """
        self._refuse_on_browser_thread("restart")
        with self._cond:
            if self._state == "stopped":
                raise Unreachable("the browser has been shut down")
            if self._state == "restarting":
                self._cond.wait_for(lambda: self._state != "restarting")
                return
            previous, self._state = self._state, "restarting"
            if not self._cond.wait_for(lambda: self._in_flight == 0, timeout=drain_timeout):
                self._state = previous
                self._cond.notify_all()
                raise Unreachable(f"browser restart gave up: {self._in_flight} user(s) still in flight")
            self._in_flight += 1  # the relaunch itself, so close() waits for it
            self._start_thread()
        try:
            self._submit(None)
        except BaseException as exc:
            self._finish_restart(success=False)
            raise Unreachable(f"browser relaunch failed: {exc}") from exc
        # Before the gate opens, so no waiting user sees what the restart was meant to clear.
        self.on_restart()
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

    def __enter__(self) -> SharedBrowser:
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
            raise RuntimeError(f"SharedBrowser.{what}() called from the browser thread would deadlock")

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
                    leftover.future.set_exception(Unreachable("the browser has been shut down"))

    def _launch(self, playwright: Playwright) -> Browser:
        executable = chromium.choose(
            self.executable_path, playwright.chromium.executable_path, distribution=chromium.distribution_id()
        )
        try:
            browser = playwright.chromium.launch(executable_path=executable, args=self.args, headless=True)
        except PlaywrightError as exc:
            raise Unreachable(f"could not launch Chromium ({executable or 'bundled'}): {exc}") from exc
        self.launched_executable = executable
        logger.info("browser: launched Chromium %s (%s)", browser.version, executable or "Playwright's own")
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
        wait: Wait,
    ) -> RenderedPage:
        # Opening a context and a page costs about a second here, so one tab is
        # kept per launched browser and reused; it only ever lives on this thread.
        tab = self._tab
        if tab is None or tab.browser is not browser or tab.page.is_closed():
            if tab is not None:
                tab.close()
            tab = self._tab = Tab(browser, self.navigation_timeout_secs, self.limits)
        return tab.render(url, cookies, url_allowed, wait)
