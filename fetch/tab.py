"""One browser tab's page load (browser thread only): cookies in, guarded redirects, the markup once it is ready.

`fetch.browser.SharedBrowser` keeps one `Tab` per launched
browser and runs every render on its own thread; this module is what a
render does there. Main-frame navigations are fetched hop by hop so each
redirect target passes the source's host check before it is requested, and
images, media, fonts and off-host subresources are never requested.

Every request the page makes, the navigation's hops included, also passes the
outbound rule (`fetch.outbound`): its host is resolved and the
request aborted when any address is loopback, private, link-local or another
refused kind, unless OUTBOUND_ALLOWED_NETWORKS names it. WebSockets are not
opened at all. The check cannot pin the connection as the HTTP transports do:
the navigation is fetched by Playwright's driver and subresources by
Chromium, and each resolves the name again. A name whose answer changes
between the two lookups (DNS rebinding with a zero TTL) can still reach an
internal address through the browser; sources that need no browser are not
exposed to this, and the browser never sees images. And when a page's own
frame or script navigates to a refused address, Chromium opens the TCP
connection before it asks this handler, which then refuses the navigation:
the connection carries no request (`test_browser_guard` pins both).

A navigation is bounded like a plain page request: the caller's `PageLimits`
(the crawler's CRAWLER_PAGE_DEADLINE_SECS for each fetch, CRAWLER_MAX_PAGE_BYTES
for the answer and for the markup the page ends with), read at each render.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urljoin

from playwright.sync_api import Browser, Route, WebSocketRoute
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from fetch import outbound
from fetch.errors import Refused, TooLarge, Unreachable

# The browser's logger: a tab's messages are the browser's, as before it had a module of its own.
logger = logging.getLogger("fetch.browser")

# Pages are rendered for their markup only; images stream over HTTP separately.
_BLOCKED_RESOURCES = frozenset({"image", "media", "font"})
_MAX_REDIRECTS = 5
_READY_POLL_MS = 100


def chrome_user_agent(version: str) -> str:
    """What Chrome of `version` on Linux sends (reduced, as Chrome sends it since 101: MAJOR.0.0.0)."""
    major = version.split(".")[0] or "0"
    return f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"


@dataclass(frozen=True)
class PageLimits:
    """How far one navigation may go: the answer's size and each fetch's time (the caller's settings)."""

    max_bytes: int
    deadline_secs: float


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

    def __init__(self, browser: Browser, timeout_secs: float, limits: Callable[[], PageLimits]) -> None:
        self.browser = browser
        self._limits = limits
        # An ordinary Chrome's User-Agent, not "HeadlessChrome": sites (and their challenges) answer it as
        # they answer readers, and a clearance cookie issued to it is sent with it by the plain transports.
        self.context = browser.new_context(user_agent=chrome_user_agent(browser.version))
        self.context.route("**/*", self._route)
        self.context.route_web_socket("**/*", _refuse_web_socket)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_secs * 1000)
        self._allowed: Callable[[str], bool] | None = None
        self._refused: list[Any] = []  # why the navigation (or a hop of it) was refused or given up
        self._final_url = [""]

    def render(
        self, url: str, cookies: list[dict[str, Any]], url_allowed: Callable[[str], bool] | None, wait: Wait
    ) -> RenderedPage:
        self._allowed, self._refused, self._final_url = url_allowed, [], [url]
        limits = self._current = self._limits()
        if cookies:
            self.context.add_cookies(cast(Any, cookies))  # Playwright's cookie dicts, as `RenderedPage` holds them
        try:
            response = self.page.goto(url, wait_until="domcontentloaded")
        except PlaywrightError:
            if self._refused:
                refusal = self._refused[0]
                if isinstance(refusal, (TooLarge, Unreachable)):
                    raise refusal from None
                raise Refused(f"browser: {refusal}") from None
            raise
        status = response.status if response else None
        html = self._settle(wait) if status is None or status < 400 else self.page.content()
        cap = limits.max_bytes
        if len(html) > cap:  # characters, not bytes: a page of multi-byte text meets the cap a little later
            raise TooLarge(
                f"browser: {self._final_url[0]} grew past the page cap of {cap} bytes (CRAWLER_MAX_PAGE_BYTES)"
            )
        retry_after = response.headers.get("retry-after") if response else None
        cookies_after = [dict(cookie) for cookie in self.context.cookies()]
        return RenderedPage(self._final_url[0], status, html, cookies_after, retry_after)

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
            return _navigate(route, request.url, self._allowed, self._refused, self._final_url, self._current)
        if request.resource_type in _BLOCKED_RESOURCES or (self._allowed and not self._allowed(request.url)):
            return route.abort("blockedbyclient")
        try:
            outbound.check_url(request.url)
        except outbound.AddressRefused as exc:
            logger.info("browser: refusing %s %s: %s", request.resource_type, request.url, exc)
            return route.abort("blockedbyclient")
        except OSError:
            return route.abort("namenotresolved")
        route.continue_()


def _refuse_web_socket(ws: WebSocketRoute) -> None:
    """No page we render needs a WebSocket, and one would bypass the request handler's checks.

    A routed WebSocket that is not connected to its server talks to nothing
    (Playwright keeps it open on the page's side only); closing it from here
    blocks the browser thread, so it is left so.
    """


def _navigate(
    route: Route,
    url: str,
    url_allowed: Callable[[str], bool] | None,
    refused: list[Any],
    final_url: list[str],
    limits: PageLimits,
) -> None:
    """Fetch a main-frame navigation ourselves, hop by hop, so no redirect target is requested unchecked.

    (Chromium does not route redirect targets, so letting it follow them would skip the guard.)
    """
    current = url
    deadline_ms = limits.deadline_secs * 1000
    cap = limits.max_bytes
    for _ in range(_MAX_REDIRECTS + 1):
        try:
            outbound.check_url(current)
        except outbound.AddressRefused as exc:
            refused.append(f"refusing to fetch {current}: {exc}")
            return route.abort("blockedbyclient")
        except OSError:  # not resolvable here: not tried elsewhere either (a transient net::ERR_ for the caller)
            return route.abort("namenotresolved")
        try:
            response = route.fetch(url=current, max_redirects=0, timeout=deadline_ms)
        except PlaywrightError as exc:
            # Surface as the page's own network error (net::ERR_...), not as a hang or a browser fault.
            text = str(exc)
            code = "connectionrefused" if "ECONNREFUSED" in text else "timedout" if "imeout" in text else "failed"
            if code == "timedout":
                secs = deadline_ms / 1000
                refused.append(
                    Unreachable(
                        f"browser: {current} did not finish within its {secs:g} s deadline (CRAWLER_PAGE_DEADLINE_SECS)"
                    )
                )
            return route.abort(code)
        location = response.headers.get("location")
        if not (300 <= response.status < 400 and location):
            final_url[0] = current
            # A declared length over the cap is refused before the body crosses over to this process.
            length = response.headers.get("content-length", "")
            size = int(length) if length.isascii() and length.isdigit() else 0
            if size <= cap:
                size = len(response.body())
            if size > cap:
                response.dispose()
                refused.append(
                    TooLarge(
                        f"browser: {current} is larger than the page cap of {cap} bytes "
                        f"(CRAWLER_MAX_PAGE_BYTES): {size} bytes"
                    )
                )
                return route.abort("blockedbyclient")
            return route.fulfill(response=response)
        target = urljoin(current, location)
        if url_allowed and not url_allowed(target):
            refused.append(f"refusing redirect from {current} to {target} (off the source's hosts)")
            return route.abort("blockedbyclient")
        current = target
    route.abort("failed")
