"""A hostile site cannot exhaust a process: oversize pages are cut at the cap, trickling ones at the deadline.

The same two paths as production: the web process (the Sources page's "look
at the site") and a worker's (`HtmlSource.list_page`). Memory is measured
with tracemalloc around the fetch: a 300 MiB page may cost a few times the
cap, never its own size.
"""

from __future__ import annotations

import gzip
import threading
import time
import tracemalloc
from collections.abc import Callable

import pytest
from django.test import Client

from sources.config import HtmlSourceConfig
from sources.errors import PageTooLarge, SourceUnavailable
from sources.html import HtmlSource
from testsupport.http_server import QuietHandler, serving

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
CAP = 8 * MiB
HUGE = 300 * MiB
CHUNK = b"<p>" + b"x" * (MiB - 7) + b"</p>\n"
ADD = "/admin/crawler/sources/add/"


class _Huge(QuietHandler):
    """A 300 MiB page: with its Content-Length declared (`/declared`), or not (`/`, read to the close)."""

    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.path.startswith("/declared"):
            self.send_header("Content-Length", str(HUGE))
        self.end_headers()
        try:
            self.wfile.write(b"<html><head><title>Huge</title></head><body>")
            for _ in range(HUGE // len(CHUNK)):
                self.wfile.write(CHUNK)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap: what we want


# 300 MiB of markup squeezed to a few hundred KiB: inflated without a bound it would cost all of it.
BOMB = gzip.compress(b"<html><body>" + b"<p></p>" * (HUGE // 7), compresslevel=9)


class _Bomb(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(BOMB)))
        self.end_headers()
        self.wfile.write(BOMB)


class _Trickle(QuietHandler):
    """Headers at once, then a byte every 0.3 s for ever: never idle long enough for the idle timeout."""

    protocol_version = "HTTP/1.0"
    stop = threading.Event()

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        try:
            while not self.stop.wait(0.3):
                self.wfile.write(b" ")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def bounds(settings):
    settings.CRAWLER_MAX_PAGE_BYTES = CAP
    settings.CRAWLER_HTTP_TIMEOUT_SECS = 1.0
    settings.CRAWLER_PAGE_DEADLINE_SECS = 2.0
    _Trickle.stop.clear()
    yield settings
    _Trickle.stop.set()


def _peak_while(fn: Callable[[], object]) -> tuple[int, BaseException | None]:
    """Peak bytes allocated while `fn` runs (tracemalloc) and what it raised."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    error = None
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the caller asserts on it
        error = exc
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak, error


def _list_page(base_url: str) -> None:
    config = HtmlSourceConfig.from_settings({"preset": "madara", "list_url": "?page={page}"}, source_id="hostile")
    source = HtmlSource("hostile", base_url, config)
    try:
        source.list_page(1)
    finally:
        source.close()


@pytest.mark.parametrize("path", ["/", "/declared"])
def test_a_worker_refuses_a_300_mib_list_page_at_the_cap_with_bounded_memory(bounds, path):
    with serving(_Huge) as site:
        peak, error = _peak_while(lambda: _list_page(site + path))
    assert isinstance(error, PageTooLarge), error
    assert f"is larger than the page cap of {CAP} bytes (CRAWLER_MAX_PAGE_BYTES)" in str(error)
    assert site + "/" in str(error)
    assert peak < 4 * CAP, f"peak {peak / MiB:.1f} MiB for a cap of {CAP / MiB:.0f} MiB"


def test_a_worker_inflates_a_gzip_bomb_no_further_than_the_cap(bounds):
    with serving(_Bomb) as site:
        peak, error = _peak_while(lambda: _list_page(site))
    assert isinstance(error, PageTooLarge) and "runs past the cap" in str(error), error
    assert peak < 4 * CAP, f"peak {peak / MiB:.1f} MiB for a cap of {CAP / MiB:.0f} MiB"


def test_a_worker_gives_up_on_a_trickling_page_at_the_deadline_as_a_transient_error(bounds):
    with serving(_Trickle) as site:
        started = time.monotonic()
        with pytest.raises(SourceUnavailable) as caught:
            _list_page(site)
        elapsed = time.monotonic() - started
    assert "did not finish within its 2 s deadline (CRAWLER_PAGE_DEADLINE_SECS)" in str(caught.value)
    assert 1.9 < elapsed < 3.5


@pytest.fixture
def operator_client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(operator)
    return client


def test_the_web_process_refuses_a_300_mib_home_page_with_a_400_and_bounded_memory(bounds, operator_client):
    with serving(_Huge) as site:
        peak, error = _peak_while(
            lambda: setattr(_Huge, "response", operator_client.post(ADD, {"step": "detect", "url": site + "/"}))
        )
    response = _Huge.response  # type: ignore[attr-defined]
    assert error is None and response.status_code == 400
    assert "is larger than the page cap of 8388608 bytes (CRAWLER_MAX_PAGE_BYTES)" in response.content.decode()
    assert peak < 4 * CAP, f"peak {peak / MiB:.1f} MiB for a cap of {CAP / MiB:.0f} MiB"


def test_the_web_process_gives_up_on_a_trickling_home_page_at_the_deadline(bounds, operator_client):
    with serving(_Trickle) as site:
        started = time.monotonic()
        response = operator_client.post(ADD, {"step": "detect", "url": site + "/"})
        elapsed = time.monotonic() - started
    assert response.status_code == 400
    assert "did not finish within its 2 s deadline (CRAWLER_PAGE_DEADLINE_SECS)" in response.content.decode()
    assert elapsed < 3.5
