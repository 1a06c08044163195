"""The MangaDex stand-in's four servers on 127.0.0.1, and the log of every exchange they had.

- `api`: GET /manga, /manga/{id}, /manga/{id}/feed and /at-home/server/{chapter}
  as the OpenAPI description shapes them (filters, `order[...]`, `includes[]`,
  offset paging with `total`), a 400 ErrorResponse for a parameter it does
  not know or an offset past the 10,000 window, and on request 429s with
  `X-RateLimit-Retry-After` (the docs' rate-limit answer);
- `uploads`: covers at /covers/{manga}/{file};
- `at_home`: a MangaDex@Home node, images under /{token}/data/{hash}/{file}
  and /{token}/data-saver/{hash}/{file}, answering `X-Cache: HIT` or `MISS`;
- `report`: POST /report, the at-home report.

Like the real API, a collection may serve fewer entries than asked: the
`list_cap` and `feed_cap` knobs make the six mangas span several list pages
and one manga's feed span two, so paging by what was served is exercised.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from testsupport.mangadex.catalog import CATALOG, PEOPLE_IDS, TAG_IDS, StandInManga, find_chapter, find_manga

WINDOW = 10_000
TOKEN = "standin-token"
DEFAULT_RATINGS = ["safe", "suggestive", "erotica"]
# The query parameters each route reads (anything else is a 400, as MangaDex answers an unknown one).
LIST_PARAMS = {
    "limit", "offset", "order[latestUploadedChapter]", "includes[]", "contentRating[]",
    "availableTranslatedLanguage[]", "hasAvailableChapters",
}  # fmt: skip
FEED_PARAMS = {
    "limit", "offset", "translatedLanguage[]", "contentRating[]", "order[volume]", "order[chapter]",
    "includeFuturePublishAt",
}  # fmt: skip


@dataclass
class Exchange:
    server: str
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.response_body)


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _json(value: Any, status: int = 200, **headers: str) -> Answer:
    return Answer(status, json.dumps(value, ensure_ascii=False).encode(), headers=headers)


def _error(status: int, title: str, detail: str) -> Answer:
    error = {"id": "00000000-0000-4000-8000-000000000000", "status": status, "title": title, "detail": detail}
    return _json({"result": "error", "errors": [error]}, status)


class _Server:
    def __init__(self, name: str, route: Any, log: list[Exchange], lock: threading.Lock) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                exchange = Exchange(
                    name, method, parts.path, parse_qs(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length) if length else b"",
                )  # fmt: skip
                answer = route(exchange)
                exchange.status, exchange.response_body = answer.status, answer.body
                exchange.response_headers = {"content-type": answer.content_type, **answer.headers}
                with lock:
                    log.append(exchange)
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for header, value in answer.headers.items():
                    self.send_header(header, value)
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


class MangaDexStandIn:
    def __init__(self, *, list_cap: int = 2, feed_cap: int = 5) -> None:
        self.catalog = CATALOG
        self.list_cap = list_cap
        self.feed_cap = feed_cap
        self.exchanges: list[Exchange] = []
        self.throttle_next = 0  # answer this many API requests 429 (the rate limit hit)
        self.throttle_secs = 2
        self._lock = threading.Lock()
        self.api = _Server("api", self._api, self.exchanges, self._lock)
        self.uploads = _Server("uploads", self._uploads, self.exchanges, self._lock)
        self.at_home = _Server("at_home", self._at_home, self.exchanges, self._lock)
        self.report = _Server("report", self._report, self.exchanges, self._lock)

    @property
    def settings(self) -> dict[str, Any]:
        """The source settings that point a mangadex source here instead of at the live hosts."""
        return {
            "api_url": self.api.url,
            "uploads_url": self.uploads.url,
            "report_url": f"{self.report.url}/report",
            "at_home_hosts": ["127.0.0.1"],
        }

    def of(self, server: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.server == server]

    def stop(self) -> None:
        for server in (self.api, self.uploads, self.at_home, self.report):
            server.stop()

    # --- the API ---------------------------------------------------------------------------

    def _api(self, exchange: Exchange) -> Answer:
        with self._lock:
            throttled = self.throttle_next > 0
            self.throttle_next -= throttled
        if throttled:
            answer = _error(429, "Too Many Requests", "You have been rate limited")
            answer.headers.update(
                {
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Retry-After": str(int(time.time()) + self.throttle_secs),
                }
            )
            return answer
        parts = exchange.path.strip("/").split("/")
        if exchange.method != "GET":
            return _error(405, "method_not_allowed", exchange.method)
        if parts == ["manga"]:
            return self._manga_list(exchange.query)
        if len(parts) == 2 and parts[0] == "manga":
            manga = find_manga(parts[1])
            return _json({"result": "ok", "response": "entity", "data": self._manga(manga)}) if manga else self._nf()
        if len(parts) == 3 and parts[0] == "manga" and parts[2] == "feed":
            manga = find_manga(parts[1])
            return self._feed(manga, exchange.query) if manga else self._nf()
        if len(parts) == 3 and parts[:2] == ["at-home", "server"]:
            return self._at_home_server(parts[2])
        return self._nf()

    @staticmethod
    def _nf() -> Answer:
        return _error(404, "not_found_http_exception", "The resource could not be found.")

    @staticmethod
    def _paging(
        query: dict[str, list[str]], known: set[str], default_limit: int, most: int
    ) -> tuple[int, int] | Answer:
        unknown = sorted(set(query) - known)
        if unknown:
            return _error(400, "validation_exception", f"Error validating /{unknown[0]}: unknown parameter")
        try:
            limit = int(query.get("limit", [str(default_limit)])[0])
            offset = int(query.get("offset", ["0"])[0])
        except ValueError:
            return _error(400, "validation_exception", "limit and offset must be integers")
        if not 0 <= limit <= most or offset < 0 or offset + limit > WINDOW:
            return _error(400, "validation_exception", "Error validating /limit: out of range")
        return limit, offset

    def _manga_list(self, query: dict[str, list[str]]) -> Answer:
        paging = self._paging(query, LIST_PARAMS, 10, 100)
        if isinstance(paging, Answer):
            return paging
        limit, offset = paging
        ratings = set(query.get("contentRating[]", DEFAULT_RATINGS))
        languages = set(query.get("availableTranslatedLanguage[]", []))
        mangas = [
            m for m in self.catalog
            if m.content_rating in ratings and (not languages or m.languages() & languages)
        ]  # fmt: skip
        newest_first = query.get("order[latestUploadedChapter]", ["desc"])[0] == "desc"
        mangas.sort(key=lambda m: m.latest_upload(), reverse=newest_first)
        served = mangas[offset : offset + min(limit, self.list_cap)]
        return _json(
            {
                "result": "ok",
                "response": "collection",
                "data": [self._manga(m, includes=set(query.get("includes[]", []))) for m in served],
                "limit": limit,
                "offset": offset,
                "total": len(mangas),
            }
        )

    def _manga(self, manga: StandInManga, includes: set[str] | None = None) -> dict[str, Any]:
        includes = {"cover_art", "author", "artist"} if includes is None else includes

        def related(kind: str, rel_id: str, attributes: dict[str, Any]) -> dict[str, Any]:
            entry: dict[str, Any] = {"id": rel_id, "type": kind}
            if kind in includes:
                entry["attributes"] = attributes
            return entry

        relationships = [
            *(related("author", PEOPLE_IDS[p], {"name": p, "imageUrl": None, "biography": {}}) for p in manga.authors),
            *(related("artist", PEOPLE_IDS[p], {"name": p, "imageUrl": None, "biography": {}}) for p in manga.artists),
            related("cover_art", manga.cover_file.removesuffix(".jpg"), {"fileName": manga.cover_file, "volume": None}),
        ]
        stamp = manga.latest_upload().strftime("%Y-%m-%dT%H:%M:%S+00:00")
        return {
            "id": manga.id,
            "type": "manga",
            "attributes": {
                "title": manga.title,
                "altTitles": list(manga.alt_titles),
                "description": manga.description,
                "isLocked": False,
                "links": {},
                "originalLanguage": "ja",
                "lastVolume": None,
                "lastChapter": None,
                "publicationDemographic": "shounen",
                "status": manga.status,
                "year": 2024,
                "contentRating": manga.content_rating,
                "chapterNumbersResetOnNewVolume": False,
                "availableTranslatedLanguages": sorted(manga.languages()),
                "latestUploadedChapter": next(c.id for c in manga.chapters if c.published() == manga.latest_upload()),
                "tags": [
                    {
                        "id": TAG_IDS[t],
                        "type": "tag",
                        "relationships": [],
                        "attributes": {"name": {"en": t}, "description": {}, "group": "genre", "version": 1},
                    }
                    for t in manga.tags
                ],  # fmt: skip
                "state": "published",
                "version": 1,
                "createdAt": "2024-01-01T00:00:00+00:00",
                "updatedAt": stamp,
            },
            "relationships": relationships,
        }

    def _feed(self, manga: StandInManga, query: dict[str, list[str]]) -> Answer:
        paging = self._paging(query, FEED_PARAMS, 100, 500)
        if isinstance(paging, Answer):
            return paging
        limit, offset = paging
        languages = set(query.get("translatedLanguage[]", []))
        ratings = set(query.get("contentRating[]", DEFAULT_RATINGS))
        chapters = [c for c in manga.chapters if (not languages or c.language in languages)]
        if query.get("includeFuturePublishAt", ["1"])[0] == "0":
            chapters = [c for c in chapters if c.published() <= dt.datetime.now(dt.UTC)]
        if manga.content_rating not in ratings:
            chapters = []
        chapters.sort(key=lambda c: (float(c.volume or 0), float(c.number) if c.number else -1.0))
        served = chapters[offset : offset + min(limit, self.feed_cap)]
        data = []
        for chapter in served:
            stamp = chapter.published().strftime("%Y-%m-%dT%H:%M:%S+00:00")
            attributes: dict[str, Any] = {
                "title": chapter.title or None,
                "volume": chapter.volume,
                "chapter": chapter.number,
                "pages": chapter.pages,
                "translatedLanguage": chapter.language,
                "externalUrl": chapter.external_url,
                "version": 1,
                "createdAt": stamp,
                "updatedAt": stamp,
                "publishAt": stamp,
                "readableAt": stamp,
            }
            if chapter.unavailable:
                attributes["isUnavailable"] = True  # newer than 5.10.0: a taken-down chapter
            data.append(
                {
                    "id": chapter.id,
                    "type": "chapter",
                    "attributes": attributes,
                    "relationships": [{"id": manga.id, "type": "manga"}],
                }
            )
        return _json(
            {
                "result": "ok",
                "response": "collection",
                "data": data,
                "limit": limit,
                "offset": offset,
                "total": len(chapters),
            }
        )

    def _at_home_server(self, chapter_id: str) -> Answer:
        chapter = find_chapter(chapter_id)
        if chapter is None or not chapter.readable:
            return self._nf()
        return _json(
            {
                "result": "ok",
                "baseUrl": f"{self.at_home.url}/{TOKEN}",
                "chapter": {"hash": chapter.hash, "data": chapter.files(False), "dataSaver": chapter.files(True)},
            }
        )

    # --- images and the report -------------------------------------------------------------

    def _uploads(self, exchange: Exchange) -> Answer:
        parts = exchange.path.strip("/").split("/")
        manga = find_manga(parts[1]) if len(parts) == 3 and parts[0] == "covers" else None
        if manga is None or parts[2] != manga.cover_file:
            return Answer(404, b"not found", "text/plain")
        return Answer(200, manga.cover, "image/jpeg")

    def _at_home(self, exchange: Exchange) -> Answer:
        parts = exchange.path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != TOKEN or parts[1] not in ("data", "data-saver"):
            return Answer(403, b"bad token", "text/plain")
        chapter = next((c for m in self.catalog for c in m.chapters if c.hash == parts[2]), None)
        saver = parts[1] == "data-saver"
        if chapter is None or parts[3] not in chapter.files(saver):
            return Answer(404, b"not found", "text/plain")
        index = chapter.files(saver).index(parts[3])
        return Answer(
            200,
            chapter.image(parts[3], saver),
            "image/jpeg" if saver else "image/png",
            {"X-Cache": "HIT" if index % 2 == 0 else "MISS"},
        )

    def _report(self, exchange: Exchange) -> Answer:
        if exchange.method != "POST" or exchange.path != "/report":
            return Answer(404, b"", "text/plain")
        return _json({"result": "ok"})
