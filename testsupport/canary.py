"""A loopback canary: an HTTP server on 127.0.0.1 and [::1] (one port) that counts every connection it accepts.

The outbound guard's tests point every spelling of "this machine" at it
through every product path and assert it was never reached: a connection
counts even when no request follows, so a fetch refused after connecting
still shows. Its page carries a secret title, so a test can also assert the
secret never reaches an answer.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from testsupport.http_server import QuietHandler

SECRET = "CANARY-SECRET-7d1f"
PAGE = (
    f"<html><head><title>{SECRET}</title></head><body>"
    f'<div class="page-item-detail"><h3><a href="/manga/secret/">{SECRET}</a></h3></div>'
    f'<img src="/cover.jpg" class="wp-post-image"></body></html>'
).encode()


@dataclass
class Canary:
    port: int
    hits: list[str] = field(default_factory=list)  # the peer of each accepted connection
    requests: list[str] = field(default_factory=list)  # "GET /path" of each request read

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True
    canary: Canary

    def get_request(self) -> tuple[socket.socket, object]:
        sock, peer = super().get_request()
        self.canary.hits.append(str(peer))
        return sock, peer


class _V6CountingServer(_CountingServer):
    address_family = socket.AF_INET6


class _Handler(QuietHandler):
    def _answer(self) -> None:
        self.server.canary.requests.append(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(PAGE)

    do_GET = do_POST = do_HEAD = _answer  # noqa: N815 - the stdlib's naming


@contextmanager
def loopback_canary() -> Iterator[Canary]:
    """A canary listening on 127.0.0.1:P and [::1]:P (the same free port P)."""
    for _ in range(50):
        v4 = _CountingServer(("127.0.0.1", 0), _Handler)
        try:
            v6 = _V6CountingServer(("::1", v4.server_address[1]), _Handler)
        except OSError:  # that port is taken on ::1: try another
            v4.server_close()
            continue
        break
    else:
        raise RuntimeError("no port free on both 127.0.0.1 and ::1")
    canary = Canary(port=v4.server_address[1])
    servers = (v4, v6)
    for server in servers:
        server.canary = canary
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield canary
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
