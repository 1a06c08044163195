"""The adapter a Source row asks for (kind demo, html, mangadex or suwayomi), with its limiter and session cookie."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from crawler.errors import SourceConfigError
from crawler.politeness.rules import Politeness
from crawler.sources.base import Source
from crawler.sources.config import HtmlSourceConfig
from crawler.sources.demo import demo_settings
from crawler.sources.html import HtmlSource
from crawler.sources.mangadex.settings import KIND as MANGADEX
from crawler.sources.suwayomi import config as suwayomi_config
from crawler.sources.suwayomi.adapter import SuwayomiSource

if TYPE_CHECKING:
    from catalog.models import Source as SourceRow
    from crawler.sources.browser import BrowserManager


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
    # Imported here so importing crawler.sources (e.g. base records) never needs the app registry.
    from crawler import state_store
    from crawler.clearance.rows import DatabaseStore
    from crawler.politeness.limiter import SourceLimiter

    settings = source_row.settings or {}
    if source_row.kind == MANGADEX:
        return _mangadex(source_row, cancel=cancel, yield_when_busy=yield_when_busy)
    if source_row.kind == suwayomi_config.KIND:
        bridge = suwayomi_config.SuwayomiConfig.from_settings(settings, source_id=source_row.id)
        gate = SourceLimiter(source_row.id, bridge.politeness, cancel=cancel, yield_when_busy=yield_when_busy)
        return SuwayomiSource(source_row.id, source_row.base_url, bridge, gate=gate)
    if source_row.kind == "demo":
        settings = demo_settings(**settings) if isinstance(settings, dict) else settings
    elif source_row.kind != "html":
        raise SourceConfigError(f"source {source_row.id!r}: unknown kind {source_row.kind!r}")
    config = HtmlSourceConfig.from_settings(settings, source_id=source_row.id)
    return HtmlSource(
        source_row.id,
        source_row.base_url,
        config,
        session_value=state_store.session_cookie(source_row.id),
        browser=browser,
        gate=SourceLimiter(source_row.id, config.politeness, cancel=cancel, yield_when_busy=yield_when_busy),
        clearance_store=DatabaseStore(),
        cancel=cancel,
    )


def needs_browser(source_row: SourceRow) -> bool:
    """Whether the row's adapter loads pages in a browser (an html source with requires_browser).

    MangaDex's and a Suwayomi-Server's answers are their APIs' JSON: never a browser, whatever the settings.
    """
    if source_row.kind in (MANGADEX, suwayomi_config.KIND):
        return False
    settings = source_row.settings or {}
    if source_row.kind == "demo":
        settings = demo_settings(**settings) if isinstance(settings, dict) else settings
    return HtmlSourceConfig.from_settings(settings, source_id=source_row.id).requires_browser


def source_politeness(source_row: SourceRow) -> Politeness:
    """The row's request limits as its adapter applies them; SourceConfigError names a bad key."""
    if source_row.kind == MANGADEX:
        from catalog.source_settings import SourceSettingsError
        from crawler.sources.mangadex.settings import MangaDexSettings

        try:
            return MangaDexSettings.from_settings(dict(source_row.settings or {}), source_id=source_row.id).politeness
        except SourceSettingsError as exc:
            raise SourceConfigError(str(exc)) from exc
    settings = source_row.settings or {}
    if source_row.kind == suwayomi_config.KIND:
        return suwayomi_config.SuwayomiConfig.from_settings(settings, source_id=source_row.id).politeness
    if source_row.kind == "demo":
        settings = demo_settings(**settings) if isinstance(settings, dict) else settings
    return HtmlSourceConfig.from_settings(settings, source_id=source_row.id).politeness


def _mangadex(source_row: SourceRow, *, cancel: threading.Event | None, yield_when_busy: bool) -> Source:
    """MangaDex: its API's limit on the source's limiter, the at-home server's 40 a minute on a second one."""
    from django.conf import settings as django_settings

    from catalog.source_settings import SourceSettingsError
    from crawler.politeness.limiter import SourceLimiter
    from crawler.sources.mangadex.adapter import MangaDexSource
    from crawler.sources.mangadex.settings import MangaDexSettings

    try:
        settings = MangaDexSettings.from_settings(dict(source_row.settings or {}), source_id=source_row.id)
    except SourceSettingsError as exc:
        raise SourceConfigError(str(exc)) from exc
    return MangaDexSource(
        source_row.id,
        settings,
        user_agent=django_settings.MANGADEX_USER_AGENT,
        gate=SourceLimiter(source_row.id, settings.politeness, cancel=cancel, yield_when_busy=yield_when_busy),
        # Its own bucket (a throttle row of its own id), waited for: one token a chapter at most.
        at_home_gate=SourceLimiter(f"{source_row.id}.at-home", settings.at_home_politeness, cancel=cancel),
    )
