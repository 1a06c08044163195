"""The adapter a Source row asks for (kind demo, html or suwayomi), with its limiter and session cookie."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from crawler.errors import SourceConfigError
from crawler.sources.base import Source
from crawler.sources.config import HtmlSourceConfig
from crawler.sources.demo import demo_settings
from crawler.sources.html import HtmlSource
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
    """The adapter for `source_row` (kind demo, html or suwayomi), with its session cookie loaded.

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
