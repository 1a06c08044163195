"""The demo manga site: a real HTTP server on a background thread.

Tests start it on 127.0.0.1 with an ephemeral port; `manage.py demo_site`
serves it in the foreground. Fault switches live on `DemoSite.faults` and can
also be set over HTTP (`POST /__control/faults`) when the site runs in another
process. Control routes ignore every fault.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import SplitResult, parse_qs, urlsplit

from demo.site import images, pages
from demo.site.catalog import DemoCatalog, DemoManga
from demo.site.faults import DemoFaults
from demo.site.throttle import ServerThrottle

logger = logging.getLogger(__name__)

SESSION_COOKIE = "PHPSESSID"
MAX_LOGGED_REQUESTS = 20_000
_MANGA = re.compile(r"^/manga/([\w-]+)$")
_CHAPTER = re.compile(r"^/manga/([\w-]+)/chapter/([\w-]+)$")
_COVER = re.compile(r"^/img/covers/([\w-]+)\.(png|jpeg|webp)$")
_PAGE_IMAGE = re.compile(r"^/img/pages/([\w-]+)/(\d+)\.(png|jpeg|webp)$")


@dataclass(frozen=True)
class DemoRequest:
    """One request as the site saw it (tests assert on paths and cookies)."""

    method: str
    path: str
    cookies: dict[str, str]


class DemoSite:
    """A running demo site. Mutate its catalog and flip its faults while it serves."""

    def __init__(self, catalog: DemoCatalog, host: str, port: int) -> None:
        self.faults = DemoFaults()
        # When set, requests are timed and answered 429 over its limit (demo.site.throttle).
        self.throttle: ServerThrottle | None = None
        self.requests: list[DemoRequest] = []
        self.drift_added: list[str] = []  # keys prepended by the list_drift fault, in order
        self._catalog = catalog
        self._server = _Server((host, port), _Handler)
        self._server.site = self
        bound_host, bound_port = self._server.server_address[:2]
        self.base_url = f"http://{bound_host}:{bound_port}"
        # A short poll keeps stop() (and so every test teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="demo-site", daemon=True
        )
        self._thread.start()

    # --- catalog -----------------------------------------------------------------------

    @property
    def catalog(self) -> list[DemoManga]:
        """Snapshot of every manga, newest first (key, title, chapters with key/number/pages...)."""
        return self._catalog.mangas()

    def manga(self, key: str) -> DemoManga | None:
        return self._catalog.manga(key)

    def add_manga(self, title: str | None = None) -> str:
        return self._catalog.add_manga(title)

    def add_chapter(self, manga_key: str) -> str:
        return self._catalog.add_chapter(manga_key)

    def remove_chapter(self, manga_key: str, chapter_key: str) -> None:
        self._catalog.remove_chapter(manga_key, chapter_key)

    def update_manga(self, manga_key: str, **fields: Any) -> None:
        self._catalog.update_manga(manga_key, **fields)

    # --- faults, lifecycle --------------------------------------------------------------

    @property
    def require_session(self) -> str | None:
        return self.faults.require_session

    @require_session.setter
    def require_session(self, value: str | None) -> None:
        self.faults.require_session = value

    def reset_faults(self) -> None:
        self.faults = DemoFaults()

    def url(self, path: str) -> str:
        return self.base_url + path

    def hits(self, path_prefix: str = "/") -> list[DemoRequest]:
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> DemoSite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- control (also reachable over HTTP) ------------------------------------------------

    def control(self, action: str, body: dict[str, Any]) -> Any:
        """Run one control action; raises ValueError/KeyError on bad input (answered as 400)."""
        if action == "faults":
            self.faults.update(body)
            return self.faults.as_dict()
        if action == "reset":
            self.reset_faults()
            return self.faults.as_dict()
        if action == "catalog":
            op = body.pop("action", None)
            operations = {
                "add_manga": self.add_manga,
                "add_chapter": self.add_chapter,
                "remove_chapter": self.remove_chapter,
                "update_manga": self.update_manga,
            }
            if op not in operations:
                raise ValueError(f"unknown catalog action {op!r}; known: {sorted(operations)}")
            return {"result": operations[op](**body)}
        raise KeyError(action)


def start_demo_site(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    mangas: int = 30,
    chapters: tuple[int, int] = (3, 5),
    pages: tuple[int, int] = (3, 5),
    seed: int = 1,
) -> DemoSite:
    """Generate a catalog and serve it on a background thread; `port=0` picks a free port."""
    catalog = DemoCatalog(mangas=mangas, chapters=chapters, pages=pages, seed=seed)
    return DemoSite(catalog, host, port)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: DemoSite


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("demo site: " + format, *args)

    @property
    def site(self) -> DemoSite:
        return self.server.site

    # --- entry points ----------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        url = urlsplit(self.path)
        if url.path.startswith("/__control/"):
            return self._control_get(url.path)
        self._record()
        throttle = self.site.throttle
        if throttle is None:
            return self._serve_get(url)
        with throttle.serving() as retry_after:
            if retry_after is not None:
                return self._too_many(retry_after)
            self._serve_get(url)

    def _serve_get(self, url: SplitResult) -> None:
        faults = self.site.faults
        if faults.slow_secs:
            time.sleep(faults.slow_secs)
        if faults.outage:
            return self._html(HTTPStatus.SERVICE_UNAVAILABLE, pages.error_page(503, "Service unavailable"))
        is_image = url.path.startswith("/img/")
        if faults.login_wall or not self._session_ok():
            if is_image:
                return self._html(HTTPStatus.FORBIDDEN, pages.error_page(403, "Forbidden"))
            return self._html(HTTPStatus.OK, pages.login_page())
        if is_image:
            return self._image(url.path)
        self._page(url.path, parse_qs(url.query))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        url = urlsplit(self.path)
        if url.path == "/login":
            return self._login()
        if not url.path.startswith("/__control/"):
            return self._html(HTTPStatus.METHOD_NOT_ALLOWED, pages.error_page(405, "Method not allowed"))
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("control body must be a JSON object")
            result = self.site.control(url.path.removeprefix("/__control/"), body)
        except KeyError:
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"unknown control route {url.path}"})
        except (ValueError, TypeError) as exc:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        self._json(HTTPStatus.OK, result)

    # --- pages -------------------------------------------------------------------------

    def _page(self, path: str, query: dict[str, list[str]]) -> None:
        site = self.site
        if path == "/":
            return self._html(HTTPStatus.OK, pages.index_page())
        if path == "/mangas":
            return self._list(query)
        if match := _MANGA.match(path):
            manga = site.manga(match[1])
            if manga is None or manga.key in site.faults.detail_404:
                return self._not_found()
            return self._html(HTTPStatus.OK, pages.detail_page(manga))
        if match := _CHAPTER.match(path):
            manga = site.manga(match[1])
            chapter = manga.chapter(match[2]) if manga else None
            if manga is None or chapter is None:
                return self._not_found()
            html = pages.chapter_page(manga, chapter, base_url=site.base_url, image_base=site.faults.offsite_images)
            return self._html(HTTPStatus.OK, html)
        self._not_found()

    def _list(self, query: dict[str, list[str]]) -> None:
        try:
            page = int(query.get("page", ["1"])[0])
        except ValueError:
            page = 0
        if page < 1:
            return self._html(HTTPStatus.BAD_REQUEST, pages.error_page(400, "page must be a positive integer"))
        site = self.site
        html = pages.list_page(site.catalog, page, markup_drift=site.faults.markup_drift)
        # Render first, mutate after: the new manga lands on a page this client has
        # already received, before it can ask for the next one.
        if site.faults.list_drift and page == 1:
            site.drift_added.append(site.add_manga())
        self._html(HTTPStatus.OK, html)

    def _image(self, path: str) -> None:
        faults = self.site.faults
        if faults.redirect_images_to:
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", faults.redirect_images_to.rstrip("/") + path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        found = self._image_bytes(path)
        if found is None:
            return self._not_found()
        data, fmt = found
        if faults.html_as_image:
            return self._html(HTTPStatus.OK, pages.error_page(200, "Image temporarily unavailable"))
        if faults.broken_image:
            data = images.broken_image(fmt)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", images.CONTENT_TYPES[fmt])
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if faults.cut_image_mid_body:
            # Announce the full length, send half, hang up: the client sees a short body.
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)

    def _image_bytes(self, path: str) -> tuple[bytes, str] | None:
        site = self.site
        if match := _COVER.match(path):
            manga = site.manga(match[1])
            if manga is None or manga.cover_format != match[2]:
                return None
            return images.render_cover(manga.title, match[2]), match[2]
        if match := _PAGE_IMAGE.match(path):
            manga_key = match[1].rsplit("-c", 1)[0]
            manga = site.manga(manga_key)
            chapter = manga.chapter(match[1]) if manga else None
            index, fmt = int(match[2]), match[3]
            if (
                manga is None
                or chapter is None
                or not (1 <= index <= chapter.pages)
                or chapter.page_format(index) != fmt
            ):
                return None
            return images.render_page(manga.title, str(chapter.number), index, fmt), fmt
        return None

    # --- session -------------------------------------------------------------------------

    def _cookies(self) -> dict[str, str]:
        jar = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except CookieError:
            return {}
        return {name: morsel.value for name, morsel in jar.items()}

    def _session_ok(self) -> bool:
        required = self.site.faults.require_session
        return required is None or self._cookies().get(SESSION_COOKIE) == required

    def _login(self) -> None:
        """Any credentials work: answers with the session cookie the site currently requires."""
        required = self.site.faults.require_session
        self.send_response(HTTPStatus.SEE_OTHER)
        if required:
            self.send_header("Set-Cookie", f"{SESSION_COOKIE}={required}; Path=/; HttpOnly")
        self.send_header("Location", pages.list_url(1))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _record(self) -> None:
        log = self.site.requests
        log.append(DemoRequest(self.command, self.path, self._cookies()))
        if len(log) > MAX_LOGGED_REQUESTS:  # a long-running `manage.py demo` must not grow without bound
            del log[: len(log) - MAX_LOGGED_REQUESTS // 2]

    # --- control ---------------------------------------------------------------------------

    def _control_get(self, path: str) -> None:
        site = self.site
        if path == "/__control/faults":
            return self._json(HTTPStatus.OK, site.faults.as_dict())
        if path == "/__control/catalog":
            catalog = [
                {
                    "key": m.key,
                    "title": m.title,
                    "chapters": [{"key": c.key, "number": str(c.number), "pages": c.pages} for c in m.chapters],
                }
                for m in site.catalog
            ]
            return self._json(HTTPStatus.OK, catalog)
        self._json(HTTPStatus.NOT_FOUND, {"error": f"unknown control route {path}"})

    # --- responses ---------------------------------------------------------------------------

    def _too_many(self, retry_after: str) -> None:
        body = pages.error_page(429, "Too many requests").encode()
        self.send_response(HTTPStatus.TOO_MANY_REQUESTS)
        self.send_header("Retry-After", retry_after)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _not_found(self) -> None:
        self._html(HTTPStatus.NOT_FOUND, pages.error_page(404, "Not found"))

    def _html(self, status: HTTPStatus, html: str) -> None:
        self._send(status, "text/html; charset=utf-8", html.encode())

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
