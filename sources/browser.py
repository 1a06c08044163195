"""The crawl worker's Chromium: `fetch.browser.SharedBrowser` with the crawler's settings and error kinds.

The browser itself (one thread, one tab, the restart gate, the guarded
navigations) is transport and lives in `fetch`; what the crawler adds is
read here, at its edge: CHROMIUM_PATH, CHROMIUM_ARGS,
CRAWLER_BROWSER_RESTART_THRESHOLD, CRAWLER_HTTP_TIMEOUT_SECS, and the page
limits (CRAWLER_MAX_PAGE_BYTES, CRAWLER_PAGE_DEADLINE_SECS, read at each
render so a changed setting applies to the next page). A successful restart
runs what the crawler registered (`after_restart`: it clears the sticky
`session_expired` flags, as the operator restarts after refreshing a
session), and `fetch.errors` become the crawler's errors, which
the engine settles by kind: unreachable → SourceUnavailable, refused →
FetchRefused, too large → PageTooLarge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.conf import settings
from playwright.sync_api import Browser

from fetch import errors
from fetch.browser import SharedBrowser
from fetch.browser_pass import BrowserPass
from fetch.tab import PageLimits, RenderedPage
from sources.errors import CrawlerError, FetchRefused, PageTooLarge, SourceUnavailable

T = TypeVar("T")

# Most specific first: each fetch error kind and the crawler error it becomes.
_KINDS: tuple[tuple[type[errors.FetchError], type[CrawlerError]], ...] = (
    (errors.TooLarge, PageTooLarge),
    (errors.Refused, FetchRefused),
    (errors.Unreachable, SourceUnavailable),
)


def crawler_error(error: errors.FetchError) -> CrawlerError:
    """The crawler's error for a fetch error, with its message (a kind not listed is an ordinary CrawlerError)."""
    for kind, crawler_kind in _KINDS:
        if isinstance(error, kind):
            return crawler_kind(str(error))
    return CrawlerError(str(error))


@contextmanager
def _as_crawler_errors() -> Iterator[None]:
    try:
        yield
    except errors.FetchError as exc:
        raise crawler_error(exc) from exc


def page_limits() -> PageLimits:
    return PageLimits(int(settings.CRAWLER_MAX_PAGE_BYTES), float(settings.CRAWLER_PAGE_DEADLINE_SECS))


class BrowserManager(SharedBrowser):
    """The shared Chromium as the crawler uses it: its settings, its session flags, its error kinds."""

    def __init__(
        self,
        executable_path: str | None = None,
        args: Iterable[str] | None = None,
        restart_threshold: int | None = None,
        *,
        navigation_timeout_secs: float | None = None,
    ) -> None:
        super().__init__(
            executable_path if executable_path is not None else (settings.CHROMIUM_PATH or None),
            args if args is not None else settings.CHROMIUM_ARGS,
            restart_threshold or settings.CRAWLER_BROWSER_RESTART_THRESHOLD,
            navigation_timeout_secs=navigation_timeout_secs or settings.CRAWLER_HTTP_TIMEOUT_SECS,
            limits=page_limits,
            on_restart=_restarted,
        )

    def run(self, fn: Callable[[Browser], T]) -> T:
        with _as_crawler_errors():
            return super().run(fn)

    def render(self, url: str, **kwargs: Any) -> RenderedPage:
        with _as_crawler_errors():
            return super().render(url, **kwargs)

    def pass_challenge(
        self, url: str, *, url_allowed: Callable[[str], bool] | None = None, wait_secs: float
    ) -> BrowserPass:
        with _as_crawler_errors():
            return super().pass_challenge(url, url_allowed=url_allowed, wait_secs=wait_secs)

    def restart(self, *, drain_timeout: float | None = None) -> None:
        with _as_crawler_errors():
            super().restart(drain_timeout=drain_timeout)


# What a successful restart runs next, registered by the app that keeps the sources' session flags (the
# crawler's `ready()`: it clears the sticky `session_expired` flags).
_after_restart: list[Callable[[], None]] = []


def after_restart(hook: Callable[[], None]) -> None:
    """Run `hook` after every successful restart of any BrowserManager (registering it twice runs it once)."""
    if hook not in _after_restart:
        _after_restart.append(hook)


def _restarted() -> None:
    for hook in _after_restart:
        hook()
