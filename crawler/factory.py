"""The adapter a Source row asks for, on the crawler's limiter, session cookie and clearance store.

How a row of each kind is configured is its entry in `sources.kinds`; what the
crawler adds when it builds one (the database-backed limiter every worker
shares, the stored session cookie, the stored challenge passes) is here, one
builder a kind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sources.base import Source
from sources.config import HtmlSourceConfig
from sources.kinds import kind_of
from sources.mangadex import settings as mangadex_settings
from sources.politeness.rules import Politeness
from sources.suwayomi import config as suwayomi_config

if TYPE_CHECKING:
    from catalog.models import Source as SourceRow
    from sources.browser import BrowserManager


@dataclass(frozen=True)
class BuildOptions:
    """How the caller runs the adapter: the job's cancel event, whether to give a busy job back, a browser."""

    cancel: threading.Event | None = None
    yield_when_busy: bool = False
    browser: BrowserManager | None = None


def _build_html(row: SourceRow, config: HtmlSourceConfig, options: BuildOptions) -> Source:
    """The html adapter (a demo row's too), with the session cookie and challenge clearances it keeps."""
    # Imported here so importing the factory never needs the app registry.
    from crawler import state_store
    from crawler.clearance.rows import DatabaseStore
    from crawler.politeness.limiter import SourceLimiter
    from sources.html import HtmlSource

    return HtmlSource(
        row.id,
        row.base_url,
        config,
        session_value=state_store.session_cookie(row.id),
        browser=options.browser,
        gate=SourceLimiter(row.id, config.politeness, cancel=options.cancel, yield_when_busy=options.yield_when_busy),
        clearance_store=DatabaseStore(),
        cancel=options.cancel,
    )


def _build_mangadex(row: SourceRow, config: mangadex_settings.MangaDexSettings, options: BuildOptions) -> Source:
    """MangaDex: its API's limit on the source's limiter, the at-home server's 40 a minute on a second one."""
    from django.conf import settings as django_settings

    from crawler.politeness.limiter import SourceLimiter
    from sources.mangadex.adapter import MangaDexSource

    return MangaDexSource(
        row.id,
        config,
        user_agent=django_settings.MANGADEX_USER_AGENT,
        gate=SourceLimiter(row.id, config.politeness, cancel=options.cancel, yield_when_busy=options.yield_when_busy),
        # Its own bucket (a throttle row of its own id), waited for: one token a chapter at most.
        at_home_gate=SourceLimiter(f"{row.id}.at-home", config.at_home_politeness, cancel=options.cancel),
    )


def _build_suwayomi(row: SourceRow, config: suwayomi_config.SuwayomiConfig, options: BuildOptions) -> Source:
    from crawler.politeness.limiter import SourceLimiter
    from sources.suwayomi.adapter import SuwayomiSource

    gate = SourceLimiter(row.id, config.politeness, cancel=options.cancel, yield_when_busy=options.yield_when_busy)
    return SuwayomiSource(row.id, row.base_url, config, gate=gate)


# Each kind's builder: (row, its config, options) -> the adapter, its requests on the source's limiter.
BUILDERS: dict[str, Callable[[SourceRow, Any, BuildOptions], Source]] = {
    "html": _build_html,
    "demo": _build_html,
    mangadex_settings.KIND: _build_mangadex,
    suwayomi_config.KIND: _build_suwayomi,
}


def get_source(
    source_row: SourceRow,
    *,
    browser: BrowserManager | None = None,
    cancel: threading.Event | None = None,
    yield_when_busy: bool = False,
) -> Source:
    """The adapter for `source_row` (kind demo, html, mangadex or suwayomi), with its session cookie loaded.

    Every request it makes takes a token and a slot from the source's limiter,
    shared through the database with every other worker; `cancel` (the job's
    cancel event) interrupts a wait for one. With `yield_when_busy` (a job's
    adapter) a request whose tokens or slots other jobs have raises
    `SourceBusy` instead of waiting, so the worker gives the job back.

    Raises SourceConfigError, naming the bad key, when the row's settings are
    invalid, or when the adapter needs a browser and none was given.
    """
    kind = kind_of(source_row.kind, source_id=source_row.id)
    config = kind.config(source_row.settings, source_id=source_row.id)
    options = BuildOptions(cancel=cancel, yield_when_busy=yield_when_busy, browser=browser)
    return BUILDERS[kind.name](source_row, config, options)


def needs_browser(source_row: SourceRow) -> bool:
    """Whether the row's adapter loads pages in a browser (an html or demo source with requires_browser).

    MangaDex's and a Suwayomi-Server's answers are their APIs' JSON: never a browser, whatever the settings.
    """
    kind = kind_of(source_row.kind, source_id=source_row.id)
    return kind.needs_browser(source_row.settings, source_id=source_row.id)


def source_politeness(source_row: SourceRow) -> Politeness:
    """The row's request limits as its adapter applies them; SourceConfigError names a bad key."""
    kind = kind_of(source_row.kind, source_id=source_row.id)
    return kind.config(source_row.settings, source_id=source_row.id).politeness
