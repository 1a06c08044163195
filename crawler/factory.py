"""The adapter a Source row asks for, with its limiter and session cookie: its kind's entry in `crawler.sources.kinds`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from crawler.politeness.rules import Politeness
from crawler.sources.base import Source
from crawler.sources.kinds import BuildOptions, kind_of

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
    kind = kind_of(source_row.kind, source_id=source_row.id)
    config = kind.config(source_row.settings, source_id=source_row.id)
    options = BuildOptions(cancel=cancel, yield_when_busy=yield_when_busy, browser=browser)
    return kind.build(source_row, config, options)


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
