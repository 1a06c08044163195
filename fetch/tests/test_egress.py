"""One proxy and CA rule for every transport: the decisions, and both transports trusting what it names."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import certifi
import httpx
import pytest
import trustme

from fetch import egress
from fetch.curl_transfer import Transfer, TransferError
from fetch.pinned import GuardedTransport
from testsupport.http_server import QuietHandler, serving


def test_the_trusted_cas_are_ssl_cert_file_else_ssl_cert_dir_else_certifis_bundle():
    assert egress.trust({"SSL_CERT_FILE": "/ca.pem", "SSL_CERT_DIR": "/certs"}) == egress.Trust("/ca.pem")
    assert egress.trust({"SSL_CERT_DIR": "/certs"}) == egress.Trust(None, "/certs")
    assert egress.trust({"SSL_CERT_FILE": ""}) == egress.Trust(certifi.where())
    assert egress.trust({}) == egress.Trust(certifi.where())


@pytest.fixture
def proxy_env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_the_proxy_is_read_in_either_case_per_scheme_with_no_proxy(proxy_env):
    assert egress.proxy_for("http://site.example/") is None
    proxy_env.setenv("HTTP_PROXY", "http://proxy.example:3128")
    proxy_env.setenv("all_proxy", "http://all.example:3128")
    assert egress.proxy_for("http://site.example/") == "http://proxy.example:3128"
    assert egress.proxy_for("https://site.example/") == "http://all.example:3128"
    proxy_env.setenv("NO_PROXY", "site.example")
    assert egress.proxy_for("http://site.example/") is None
    assert egress.proxy_for("http://cdn.example/") == "http://proxy.example:3128"


class _Page(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture
def tls_site(tmp_path) -> Iterator[tuple[str, str]]:
    """An HTTPS site on 127.0.0.1 with a certificate from its own CA; yields (base URL, CA bundle path)."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    with serving(_Page, tls=context) as url:
        yield url, str(bundle)


def _page(url: str) -> bytes:
    with httpx.Client(transport=GuardedTransport()) as client:
        return client.get(url).content


def _image(url: str) -> int:
    # On a fresh thread: libcurl's handles are made per thread, with the environment of the moment.
    def fetch() -> int:
        transfer = Transfer(url, {}, timeout_secs=10)
        transfer.close()
        return transfer.status_code

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fetch).result(timeout=30)


def test_pages_and_images_trust_the_same_cas(tls_site, monkeypatch):
    base, bundle = tls_site
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(httpx.ConnectError, match="(?i)certificate"):
        _page(base + "/")
    with pytest.raises(TransferError, match="(?i)certificate"):
        _image(base + "/x.jpg")
    monkeypatch.setenv("SSL_CERT_FILE", bundle)  # the operator's own CA: both transports take it
    assert _page(base + "/") == b"ok"
    assert _image(base + "/x.jpg") == 200
