"""A small HTTP(S) server on 127.0.0.1 for tests whose handler is a `BaseHTTPRequestHandler` of their own."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 (connections kept between requests), nothing logged to the test's output."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], *, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """Serve `handler` on a free 127.0.0.1 port (over TLS with `tls`, a server context) and yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
