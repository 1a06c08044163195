"""The headless Chromium the browser tests drive: one per test module, Debian's build, the project's launch args."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.conf import settings
from playwright.sync_api import Browser, sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an event loop on this thread, which makes
    # Django refuse ORM calls from the test body; the live server (a separate
    # process) never sees this flag.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=settings.CHROMIUM_PATH or "/usr/bin/chromium", args=settings.CHROMIUM_ARGS
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
