"""One browser tab's page load (browser thread only): cookies in, guarded redirects, the markup once it is ready.

`crawler.sources.browser.BrowserManager` keeps one `Tab` per launched
browser and runs every render on its own thread; this module is what a
render does there. Main-frame navigations are fetched hop by hop so each
redirect target passes the source's host check before it is requested, and
images, media, fonts and off-host subresources are never requested.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from playwright.sync_api import Browser, Route
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from crawler.errors import FetchRefused

# The browser's logger: a tab's messages are the browser's, as before it had a module of its own.
logger = logging.getLogger("crawler.sources.browser")

# Pages are rendered for their markup only; images stream over HTTP separately.
_BLOCKED_RESOURCES = frozenset({"image", "media", "font"})
_MAX_REDIRECTS = 5
_READY_POLL_MS = 100


def chrome_user_agent(version: str) -> str:
    """What Chrome of `version` on Linux sends (reduced, as Chrome sends it since 101: MAJOR.0.0.0)."""
    major = version.split(".")[0] or "0"
    return f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"


@dataclass(frozen=True)
class RenderedPage:
    url: str  # final URL after (guarded) redirects
    status: int | None
    html: str
    cookies: list[dict[str, Any]] = field(default_factory=list)  # the context's cookies after the load
    retry_after: str | None = None  # the answer's Retry-After header (a 429/503 cools the source down)


@dataclass(frozen=True)
class Wait:
    ready: Callable[[str], bool] | None
    secs: float
    network_idle: bool


class Tab:
    """A browser context with one page, reused across renders (browser thread only)."""

    def __init__(self, browser: Browser, timeout_secs: float) -> None:
        self.browser = browser
        # An ordinary Chrome's User-Agent, not "HeadlessChrome": sites (and their challenges) answer it as
        # they answer readers, and a clearance cookie issued to it is sent with it by the plain transports.
        self.context = browser.new_context(user_agent=chrome_user_agent(browser.version))
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_secs * 1000)
        self._allowed: Callable[[str], bool] | None = None
        self._refused: list[str] = []
        self._final_url = [""]

    def render(
        self, url: str, cookies: list[dict[str, Any]], url_allowed: Callable[[str], bool] | None, wait: Wait
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

    def _settle(self, wait: Wait) -> str:
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
