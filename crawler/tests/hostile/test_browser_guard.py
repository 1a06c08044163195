"""The browser path: a rendered source refuses inside addresses, its pages reach no canary, its pages are bounded."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import pytest

from fetch.addresses import parse_networks
from sources.browser import BrowserManager
from sources.config import HtmlSourceConfig
from sources.errors import FetchRefused, PageTooLarge
from sources.html import HtmlSource
from testsupport.http_server import QuietHandler, serving

from .conftest import LOOPBACK_FORMS, url_for

pytestmark = pytest.mark.browser

RULE = "OUTBOUND_ALLOWED_NETWORKS"


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserManager]:
    manager = BrowserManager()
    yield manager
    manager.close()


def _rendered_source(base_url: str, browser: BrowserManager) -> HtmlSource:
    config = HtmlSourceConfig.from_settings(
        {"preset": "madara", "requires_browser": True, "list_url": "?page={page}"}, source_id="inside"
    )
    return HtmlSource("inside", base_url, config, browser=browser)


def test_a_rendered_source_refuses_every_loopback_form_and_the_canary_sees_nothing(canary, browser):
    failures = []
    for form in LOOPBACK_FORMS:
        source = _rendered_source(url_for(form, canary.port, ""), browser)
        try:
            source.list_page(1)
        except FetchRefused as exc:
            if RULE not in str(exc):
                failures.append((form, str(exc)))
        except Exception as exc:  # noqa: BLE001 - collected: any other outcome is a failure of the guard
            failures.append((form, repr(exc)))
        else:
            failures.append((form, "rendered"))
    assert failures == [] and canary.hits == []


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True


@contextmanager
def _serving_on_ipv6_loopback(handler: type[QuietHandler]) -> Iterator[str]:
    import threading

    server = _V6Server(("::1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://[::1]:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _render_list_on_ipv6_loopback(body: str, browser: BrowserManager, image_hosts: tuple[str, ...] = ()) -> list[str]:
    """Render `body` as the list page of a source on [::1] (the only allowed network) and return its keys."""
    page = (
        '<html><body><div class="page-item-detail"><div class="post-title"><a href="/manga/a/">A</a></div></div>'
        + body
        + "</body></html>"
    ).encode()

    class Page(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    with _serving_on_ipv6_loopback(Page) as site:
        config = HtmlSourceConfig.from_settings(
            {"preset": "madara", "requires_browser": True, "list_url": "?page={page}", "browser_wait_secs": 1.0,
             "browser_network_idle": True, "image_hosts": list(image_hosts)},
            source_id="allowed",
        )  # fmt: skip
        source = HtmlSource("allowed", site, config, browser=browser)
        refs, _ = source.list_page(1)
    return [r.key for r in refs]


def test_an_allowed_pages_scripts_fetches_and_websockets_never_reach_the_canary(canary, browser, settings):
    """The site is on [::1] (allowed); whatever its page asks of 127.0.0.1 is refused inside the browser."""
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("::1/128")
    port = canary.port
    # This machine's name resolves to a refused address (127.0.0.1 here, a private one in a container): as an
    # image host it passes the name check, and only the address check in the request handler stops it.
    own_name = f"{socket.gethostname()}:{port}"
    body = (
        f'<script src="http://{own_name}/own-name.js"></script>'
        f'<script src="http://localhost:{port}/script.js"></script>'
        f'<link rel="stylesheet" href="http://127.0.0.1:{port}/style.css">'
        f'<script>fetch("http://[::ffff:127.0.0.1]:{port}/fetch").catch(() => 0);'
        f'try {{ new WebSocket("ws://127.0.0.1:{port}/ws"); }} catch (e) {{}}'
        f'try {{ new WebSocket("ws://[::1]:{port}/ws"); }} catch (e) {{}}</script>'
    )
    assert _render_list_on_ipv6_loopback(body, browser, image_hosts=(own_name,)) == ["a"]
    assert canary.hits == [] and canary.requests == []


def test_an_allowed_pages_frame_to_the_canary_sends_it_no_request(canary, browser, settings):
    """A page's own navigations (a frame, `location.href = ...`) are refused before any request is sent, but
    Chromium opens the TCP connection for them before it asks the request handler (docs/sources.md#outbound-fetches): the canary sees a connection and never a request."""
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("::1/128")
    body = f'<iframe src="http://127.0.0.1:{canary.port}/frame"></iframe>'
    assert _render_list_on_ipv6_loopback(body, browser) == ["a"]
    assert canary.requests == []
    assert len(canary.hits) <= 1  # the connection Chromium opens ahead of the refused navigation


def test_a_rendered_page_over_the_cap_is_refused(browser, settings):
    settings.CRAWLER_MAX_PAGE_BYTES = 1024 * 1024
    body = b"<html><body>" + b"<p>x</p>" * (3 * 1024 * 1024 // 8) + b"</body></html>"

    class Big(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            if "declared" in self.path:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

    with serving(Big) as site:
        for base in (site + "/declared/", site + "/"):
            with pytest.raises(
                PageTooLarge, match=r"larger than the page cap of 1048576 bytes \(CRAWLER_MAX_PAGE_BYTES\)"
            ):
                _rendered_source(base, browser).list_page(1)


def test_a_rendered_page_that_trickles_fails_at_the_deadline(browser, settings):
    import threading
    import time

    from sources.errors import SourceUnavailable

    settings.CRAWLER_PAGE_DEADLINE_SECS = 2.0
    stop = threading.Event()

    class Trickle(QuietHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                while not stop.wait(0.3):
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    try:
        with serving(Trickle) as site:
            started = time.monotonic()
            with pytest.raises(
                SourceUnavailable, match=r"did not finish within its 2 s deadline \(CRAWLER_PAGE_DEADLINE"
            ):
                _rendered_source(site + "/", browser).list_page(1)
            elapsed = time.monotonic() - started
    finally:
        stop.set()
    assert elapsed < 4.0
