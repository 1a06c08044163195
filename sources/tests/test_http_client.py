"""One httpx client per source and process, shared by every adapter, with each adapter's cookies kept apart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sources.cookies import SourceCookies
from sources.hosts import HostGuard
from sources.http import SourceHttp
from testsupport.http_server import QuietHandler, serving

pytestmark = pytest.mark.sqlite_ok


class _CookieSite(QuietHandler):
    """`/login` sets a session cookie; `/echo` answers with the Cookie header it got; both keep the connection."""

    connections: set[tuple[str, int]] = set()

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).connections.add(self.client_address)
        body = (self.headers.get("Cookie") or "-").encode() if self.path == "/echo" else b"welcome"
        self.send_response(200)
        if self.path == "/login":
            self.send_header("Set-Cookie", "session=secret-of-one-job; Path=/")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[str]:
    _CookieSite.connections = set()
    with serving(_CookieSite) as url:
        yield url


def _adapter_http(base_url: str) -> SourceHttp:
    return SourceHttp("cookies", HostGuard("cookies", base_url), SourceCookies())


def test_adapters_of_a_source_share_one_client_and_its_connection(site):
    first, second = _adapter_http(site), _adapter_http(site)
    assert first.client is second.client
    first.request_page(f"{site}/echo")
    first.close()  # a job ends: the connection stays open for the next one
    second.request_page(f"{site}/echo")
    assert len(_CookieSite.connections) == 1


def test_a_cookie_one_adapter_was_given_never_goes_out_with_anothers_request(site):
    logged_in, other = _adapter_http(site), _adapter_http(site)
    logged_in.request_page(f"{site}/login")
    assert other.request_page(f"{site}/echo").html == "-"
    assert logged_in.request_page(f"{site}/echo").html == "session=secret-of-one-job"


def test_an_answer_that_sets_no_cookie_goes_through_no_cookie_machinery(site, monkeypatch):
    # The shared client keeps no cookies, so it has nothing to extract: an answer's Set-Cookie reaches the
    # adapter's own store alone (the test above), and the answers that set none (every image) cost nothing.
    import http.cookiejar

    adapter = _adapter_http(site)
    adapter.request_page(f"{site}/login")
    extracted = []
    monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies", lambda jar, *args: extracted.append(args))
    assert adapter.request_page(f"{site}/echo").html == "session=secret-of-one-job"
    assert extracted == []
    assert len(adapter.client.cookies) == 0
