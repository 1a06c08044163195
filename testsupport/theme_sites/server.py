"""A small threaded HTTP server for the fixture sites: one route function, a request log, a clean stop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes = b""  # the raw POST body (a JSON API's request; `form` is its form reading)

    @property
    def referer(self) -> str:
        return self.headers.get("referer", "")


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)


def html(body: str, status: int = 200) -> Response:
    return Response(status, body.encode())


def png(data: bytes) -> Response:
    return Response(200, data, "image/png")


def redirect(location: str, status: int = 301) -> Response:
    return Response(status, b"", headers={"Location": location})


NOT_FOUND_PAGE = "<!DOCTYPE html><html><body class='error404'><h1>Page not found</h1></body></html>"


def not_found() -> Response:
    return html(NOT_FOUND_PAGE, 404)


Route = Callable[[Request], Response]


class FixtureServer:
    """Serves `route` on 127.0.0.1:<ephemeral> from a background thread; `requests` logs what it saw."""

    def __init__(self, route: Route, name: str) -> None:
        self.requests: list[Request] = []
        self._route = route
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
                self._answer("GET", {})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                raw = body.decode(errors="replace")
                form = {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}
                self._answer("POST", form, body)

            def _answer(self, method: str, form: dict[str, str], body: bytes = b"") -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(method, parts.path, query, form, headers, body)
                server.requests.append(request)
                response = server._route(request)
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(response.body)))
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(response.body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = str(self._server.server_address[0]), self._server.server_address[1]
        self.host_port = f"{host}:{port}"
        self.base_url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )
        self._thread.start()

    def hits(self, method: str, path_prefix: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
