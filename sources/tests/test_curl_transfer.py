"""Image answers through libcurl: headers before the body, the body in order as it arrives, connections kept,
transfers that break off or stall refused, and an image that sets a cookie handled as httpx would."""

from __future__ import annotations

import hashlib
import os
import socket
import ssl
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import trustme

from fetch import curl_transfer
from fetch.curl_transfer import Transfer, TransferError
from sources.cookies import SourceCookies
from sources.errors import CrawlerError, SourceUnavailable
from sources.hosts import HostGuard
from sources.http import SourceHttp
from testsupport.http_server import QuietHandler, serving

pytestmark = pytest.mark.sqlite_ok

BIG = os.urandom(3 * curl_transfer.BUFFER_BYTES + 12345)  # more than one read of libcurl's buffer


class _ImageSite(QuietHandler):
    connections: set[tuple[str, int]] = set()

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).connections.add(self.client_address)
        if self.path == "/big.jpg":
            self._answer(200, BIG, {"X-Seen-Referer": self.headers.get("Referer", "-")})
        elif self.path == "/continue.jpg":  # an interim answer before the real one
            self.wfile.write(b"HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n")
            self._answer(200, b"after-continue", {})
        elif self.path == "/cookie.jpg":
            self._answer(200, b"img", {"Set-Cookie": "cdn_token=abc; Path=/"})
        elif self.path == "/echo-cookie.jpg":
            self._answer(200, (self.headers.get("Cookie") or "-").encode(), {})
        elif self.path == "/cut.jpg":  # declares more than it sends, then hangs up
            self.send_response(200)
            self.send_header("Content-Length", str(len(BIG)))
            self.end_headers()
            self.wfile.write(BIG[:1000])
            self.wfile.flush()
            self.close_connection = True
        elif self.path == "/stall.jpg":  # headers, then nothing for longer than the timeout
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.flush()
            time.sleep(4)
            self.close_connection = True

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[str]:
    _ImageSite.connections = set()
    with serving(_ImageSite) as url:
        yield url


def _read(transfer: Transfer) -> bytes:
    try:
        return b"".join(transfer.chunks())
    finally:
        transfer.close()


def test_the_answer_comes_before_the_body_and_the_body_arrives_whole_and_in_order(site):
    transfer = Transfer(f"{site}/big.jpg", {"Referer": f"{site}/chapter-1/"}, timeout_secs=10)
    assert transfer.status_code == 200
    assert transfer.headers["content-type"] == "image/jpeg"
    assert transfer.headers["content-length"] == str(len(BIG))
    assert transfer.headers["x-seen-referer"] == f"{site}/chapter-1/"  # our headers were sent
    chunks = list(transfer.chunks())
    transfer.close()
    assert len(chunks) > 1 and max(map(len, chunks)) <= curl_transfer.BUFFER_BYTES
    assert hashlib.sha256(b"".join(chunks)).digest() == hashlib.sha256(BIG).digest()


def test_an_interim_answer_is_not_taken_for_the_real_one(site):
    transfer = Transfer(f"{site}/continue.jpg", {}, timeout_secs=10)
    assert transfer.status_code == 200 and "x-interim" not in transfer.headers
    assert _read(transfer) == b"after-continue"


def test_consecutive_transfers_of_a_thread_reuse_its_connection(site):
    for _ in range(3):
        assert len(_read(Transfer(f"{site}/big.jpg", {}, timeout_secs=10))) == len(BIG)
    assert len(_ImageSite.connections) == 1


def test_a_transfer_left_open_does_not_block_the_next_one_on_its_thread(site):
    forgotten = Transfer(f"{site}/big.jpg", {}, timeout_secs=10)
    assert _read(Transfer(f"{site}/big.jpg", {}, timeout_secs=10)) == BIG
    assert _read(forgotten) == BIG


def test_a_body_cut_short_raises_instead_of_ending_quietly(site):
    transfer = Transfer(f"{site}/cut.jpg", {}, timeout_secs=10)
    with pytest.raises(TransferError):
        _read(transfer)


def test_a_server_that_stops_sending_times_out(site):
    transfer = Transfer(f"{site}/stall.jpg", {}, timeout_secs=1)
    started = time.monotonic()
    with pytest.raises(TransferError, match="(?i)time"):
        _read(transfer)
    assert time.monotonic() - started < 3.5  # the 1 s timeout, not the server's 4 s


def test_a_refused_connection_is_a_transfer_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: nothing accepts
    with pytest.raises(TransferError):
        Transfer(f"http://127.0.0.1:{port}/x.jpg", {}, timeout_secs=2)


def test_only_http_is_spoken():
    with pytest.raises(TransferError):
        Transfer("file:///etc/passwd", {}, timeout_secs=2)


def test_an_image_that_sets_a_cookie_has_it_sent_on_the_next_request(site):
    http = SourceHttp("imgs", HostGuard("imgs", site), SourceCookies())
    http.open_image(f"{site}/cookie.jpg").close()
    stream = http.open_image(f"{site}/echo-cookie.jpg")
    try:
        assert b"".join(stream.iter_bytes()) == b"cdn_token=abc"
    finally:
        stream.close()


def test_a_cut_image_through_the_source_surfaces_as_source_unavailable(site):
    stream = SourceHttp("imgs", HostGuard("imgs", site), SourceCookies()).open_image(f"{site}/cut.jpg")
    try:
        with pytest.raises(SourceUnavailable, match="broke off"):
            b"".join(stream.iter_bytes())
    finally:
        stream.close()


@pytest.fixture
def tls_site(tmp_path) -> Iterator[tuple[str, str]]:
    """An HTTPS image host on 127.0.0.1 with a certificate from its own CA; yields (base URL, CA bundle path)."""
    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    with serving(_ImageSite, tls=context) as url:
        yield url, str(bundle)


def _in_a_new_thread(work):
    """Run `work` on a fresh thread: its libcurl handles are made there, with the environment of the moment."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result(timeout=30)


def test_https_images_verify_the_certificate_against_the_trusted_bundle(tls_site, monkeypatch):
    base, bundle = tls_site
    with pytest.raises(TransferError, match="(?i)certificate"):  # a CA nobody trusts: refused
        _in_a_new_thread(lambda: Transfer(f"{base}/big.jpg", {}, timeout_secs=10))
    monkeypatch.setenv("SSL_CERT_FILE", bundle)  # the operator's own CA, as httpx reads it too
    assert _in_a_new_thread(lambda: _read(Transfer(f"{base}/big.jpg", {}, timeout_secs=10))) == BIG


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(site):
    with pytest.raises(ValueError, match="line break"):
        Transfer(f"{site}/big.jpg", {"Referer": "https://site/\r\nX-Injected: yes"}, timeout_secs=5)
    assert _ImageSite.connections == set()
    http = SourceHttp("imgs", HostGuard("imgs", site), SourceCookies(), headers={"X-Site": "a\nb"})
    with pytest.raises(CrawlerError, match="line break") as refused:
        http.open_image(f"{site}/big.jpg")
    assert not isinstance(refused.value, SourceUnavailable)  # deterministic: not retried like an outage


class _ForwardProxy(QuietHandler):
    """A plain HTTP forward proxy's answer: records the absolute URL asked for and answers itself."""

    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).asked.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"via-proxy")


def test_images_take_the_proxy_the_environment_names_as_the_pages_do(site, monkeypatch):
    _ForwardProxy.asked = []
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "NO_PROXY", "ALL_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with serving(_ForwardProxy) as proxy:
        # Upper case, as httpx reads it (libcurl by itself only reads http_proxy in lower case).
        monkeypatch.setenv("HTTP_PROXY", proxy)
        assert _in_a_new_thread(lambda: _read(Transfer(f"{site}/big.jpg", {}, timeout_secs=10))) == b"via-proxy"
        assert _ForwardProxy.asked == [f"{site}/big.jpg"]
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert _in_a_new_thread(lambda: _read(Transfer(f"{site}/big.jpg", {}, timeout_secs=10))) == BIG
        assert len(_ForwardProxy.asked) == 1
