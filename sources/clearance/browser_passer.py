"""`sources.clearance.records.Passer` through the worker's shared Chromium (`BrowserManager.pass_challenge`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from fetch.challenge import StillChallenged
from sources.clearance.records import Clearance, PassFailed, clearance_cookies
from sources.errors import CrawlerError

if TYPE_CHECKING:
    from sources.browser import BrowserManager

logger = logging.getLogger(__name__)


class BrowserPasser:
    name = "browser"

    def __init__(
        self,
        browser: BrowserManager,
        *,
        url_allowed: Callable[[str], bool] | None,
        wait_secs: float,
        exclude_cookies: Iterable[str] = (),
    ) -> None:
        self.browser = browser
        self.url_allowed = url_allowed
        self.wait_secs = wait_secs
        self.exclude = tuple(exclude_cookies)

    def pass_challenge(self, url: str) -> Clearance:
        try:
            passed = self.browser.pass_challenge(url, url_allowed=self.url_allowed, wait_secs=self.wait_secs)
        except StillChallenged as exc:
            raise PassFailed(str(exc)) from exc
        except CrawlerError as exc:  # could not launch, could not load, a redirect off the source's hosts
            raise PassFailed(str(exc)) from exc
        logger.info("browser: %s reloaded past its challenge in %.2f s", url, passed.seconds)
        cookies = clearance_cookies(passed.cookies, url, exclude=self.exclude)
        if not cookies:
            raise PassFailed(f"the page reloaded into the site but left no cookie for {url}")
        return Clearance(cookies, passed.user_agent, "browser")
