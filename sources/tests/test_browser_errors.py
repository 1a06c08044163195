"""The crawler's side of the shared Chromium: fetch errors become the crawler errors the engine settles, and a
restart runs what the crawler registered."""

from __future__ import annotations

import pytest

from fetch import errors
from fetch.chromium import ChromiumMissing
from sources.browser import crawler_error
from sources.errors import CrawlerError, FetchRefused, PageTooLarge, PermanentError, SourceUnavailable

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize(
    ("fetch_error", "crawler_kind"),
    [
        (errors.Unreachable("browser could not load x"), SourceUnavailable),
        (errors.Refused("browser: refusing to fetch x"), FetchRefused),
        (errors.TooLarge("browser: x is larger than the page cap"), PageTooLarge),
        (ChromiumMissing("no Chromium found"), SourceUnavailable),
        (errors.FetchError("something else"), CrawlerError),
    ],
)
def test_each_fetch_error_becomes_its_crawler_kind_with_its_message(fetch_error, crawler_kind):
    translated = crawler_error(fetch_error)
    assert type(translated) is crawler_kind
    assert str(translated) == str(fetch_error)


def test_a_refusal_and_an_oversized_page_are_permanent_an_unreachable_browser_is_not():
    assert isinstance(crawler_error(errors.Refused("x")), PermanentError)
    assert isinstance(crawler_error(errors.TooLarge("x")), PermanentError)
    assert not isinstance(crawler_error(errors.Unreachable("x")), PermanentError)


def test_the_crawler_registers_its_session_flags_clearing_to_run_after_a_restart_once():
    from crawler import state_store
    from sources import browser

    assert browser._after_restart.count(state_store.clear_expired_sessions) == 1
    browser.after_restart(state_store.clear_expired_sessions)
    assert browser._after_restart.count(state_store.clear_expired_sessions) == 1
