"""A challenge passed in the worker's Chromium (browser thread only): open the URL, wait for the reload, keep the cookies.

The page is opened in a context of its own (`Tab`: the same guarded
navigations, the same ordinary Chrome User-Agent as the renders), so one
source's pass never mixes with another's cookies. The interstitial's script
computes its token, sets the clearance cookie and reloads; we wait, bounded
by CRAWLER_CHALLENGE_WAIT_SECS, for a main-frame answer that is no longer a
challenge, then take the context's cookies and `navigator.userAgent`.

This is transport work (a tab, its navigations, what the wire answers), so
it lives with the browser; deciding when a pass is worth making and keeping
what it yields is the crawler's (`crawler.clearance`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser, Response
from playwright.sync_api import Error as PlaywrightError

from fetch.challenge import StillChallenged, detect_challenge
from fetch.tab import PageLimits, Tab, Wait

_POLL_MS = 100


@dataclass(frozen=True)
class BrowserPass:
    url: str
    status: int
    html: str
    cookies: list[dict[str, Any]]
    user_agent: str
    seconds: float  # how long the pass took, for the log and the benchmarks


def pass_in_browser(
    browser: Browser,
    url: str,
    url_allowed: Callable[[str], bool] | None,
    *,
    wait_secs: float,
    timeout_secs: float,
    limits: Callable[[], PageLimits],
) -> BrowserPass:
    started = time.monotonic()
    tab = Tab(browser, timeout_secs, limits)
    answers: list[tuple[int, dict[str, str]]] = []

    def seen(response: Response) -> None:
        if response.request.is_navigation_request() and response.frame.parent_frame is None:
            answers.append((response.status, response.headers))

    try:
        tab.page.on("response", seen)
        first = tab.render(url, [], url_allowed, Wait(None, 0.0, False))
        status, headers = answers[-1] if answers else (first.status or 200, {})
        html = first.html
        if detect_challenge(status, headers, html) is not None:
            status, html = _wait_for_reload(tab, answers, len(answers), started + wait_secs, url, wait_secs)
        user_agent = str(tab.page.evaluate("navigator.userAgent"))
        cookies = [dict(cookie) for cookie in tab.context.cookies()]
        return BrowserPass(tab.page.url, status, html, cookies, user_agent, time.monotonic() - started)
    finally:
        tab.close()


def _wait_for_reload(
    tab: Tab, answers: list[tuple[int, dict[str, str]]], seen: int, deadline: float, url: str, wait_secs: float
) -> tuple[int, str]:
    """The status and markup of the first page after the challenge that is not a challenge itself."""
    last = answers[-1][0] if answers else None
    while time.monotonic() < deadline:
        if len(answers) > seen:
            status, headers = answers[-1]
            last, seen = status, len(answers)
            if detect_challenge(status, headers) is None and status < 400:
                try:
                    remaining = max(1.0, (deadline - time.monotonic()) * 1000)
                    tab.page.wait_for_load_state("domcontentloaded", timeout=remaining)
                    html = tab.page.content()
                except PlaywrightError:
                    # The reload's answer came before its document replaced the interstitial ("execution
                    # context was destroyed"): read the newest answer's page again on the next turn.
                    seen -= 1
                    tab.page.wait_for_timeout(_POLL_MS)
                    continue
                if detect_challenge(status, headers, html) is None:
                    return status, html
        tab.page.wait_for_timeout(_POLL_MS)
    raise StillChallenged(
        f"{url} was still a challenge after {wait_secs:g} s (CRAWLER_CHALLENGE_WAIT_SECS); "
        f"{len(answers)} answer(s), the last {last}"
    )
