"""The challenge handler an adapter gets: its source's store, and the ways to pass this process has.

The worker's Chromium when the adapter was given one (every crawl worker,
and `add_source`, which may start one), then the FlareSolverr-compatible
solver when CRAWLER_CHALLENGE_SOLVER_URL is set (the only way in the web
process). Neither: challenges are named with what to configure.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings

from sources.clearance.browser_passer import BrowserPasser
from sources.clearance.handler import ChallengeHandler, PassSettings
from sources.clearance.planning import ClearanceStore
from sources.clearance.records import Passer
from sources.clearance.solver import SolverPasser

if TYPE_CHECKING:
    from sources.browser import BrowserManager
    from sources.cookies import SourceCookies
    from sources.politeness.gate import RequestGate


def pass_settings() -> PassSettings:
    return PassSettings(
        interval=dt.timedelta(seconds=settings.CRAWLER_CHALLENGE_PASS_INTERVAL_SECS),
        wait_secs=float(settings.CRAWLER_CHALLENGE_WAIT_SECS),
        solver_configured=bool(settings.CRAWLER_CHALLENGE_SOLVER_URL),
    )


def passers(
    *, browser: BrowserManager | None, url_allowed: Callable[[str], bool] | None, session_cookie: str = ""
) -> list[Passer]:
    """The ways to pass in reach, best first. The operator's session cookie is never taken as part of a pass."""
    wait = float(settings.CRAWLER_CHALLENGE_WAIT_SECS)
    exclude = (session_cookie,) if session_cookie else ()
    found: list[Passer] = []
    if browser is not None:
        found.append(BrowserPasser(browser, url_allowed=url_allowed, wait_secs=wait, exclude_cookies=exclude))
    if settings.CRAWLER_CHALLENGE_SOLVER_URL:
        found.append(SolverPasser(settings.CRAWLER_CHALLENGE_SOLVER_URL, wait_secs=wait, exclude_cookies=exclude))
    return found


def challenge_handler(
    source_id: str,
    cookies: SourceCookies,
    store: ClearanceStore,
    *,
    browser: BrowserManager | None,
    url_allowed: Callable[[str], bool] | None,
    gate: RequestGate | None = None,
    session_cookie: str = "",
    cancel: threading.Event | None = None,
) -> ChallengeHandler:
    return ChallengeHandler(
        source_id,
        cookies,
        store,
        passers(browser=browser, url_allowed=url_allowed, session_cookie=session_cookie),
        pass_settings(),
        cool_down=gate.cool_down if gate is not None else None,
        cancel=cancel,
    )
