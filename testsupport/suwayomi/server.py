"""The stand-in Suwayomi-Server: the recorded schema executed by graphql-core over the catalog, on 127.0.0.1.

It answers what the real server answers at the same paths: POST
`/api/graphql` (every document validated against the recorded schema of its
`version`, r2320 by default or the oldest, r1353, before it
runs; an invalid one is logged in `invalid` and answered 400 with its errors,
as graphql-kotlin does), the thumbnail and page-image endpoints, and the
auth modes BASIC_AUTH (401 with `WWW-Authenticate: Basic`) and UI_LOGIN
(the `login` mutation's token as `Authorization: Bearer`). Execution itself
checks every answer against the schema (non-null fields, enum values).

Switches for the failures the crawler must answer: `down` (503 to
everything, a server restarting), `webview_sources` (the extension throws
Mihon's "Log in via WebView" for those source ids).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graphql import GraphQLError, graphql_sync, parse, validate

from sources.suwayomi.schema import NEWEST, suwayomi_schema
from testsupport.suwayomi.catalog import EXTENSIONS, SOURCES, StandinManga, build_mangas
from testsupport.theme_sites.server import FixtureServer, Request, Response, png

LIST_PAGE_SIZE = 3
SERVER_VERSION = "v2.1.2320"
LEGACY_VERSION = "v0.7.0-r1353"
_THUMBNAIL = re.compile(r"^/api/v1/manga/(\d+)/thumbnail$")
_PAGE = re.compile(r"^/api/v1/manga/(\d+)/chapter/(\d+)/page/(\d+)$")


def _json(body: Any, status: int = 200) -> Response:
    return Response(status, json.dumps(body).encode(), "application/json")


class SuwayomiStandin:
    def __init__(
        self, *, auth: str | None = None, username: str = "reader", password: str = "secret", version: str = NEWEST
    ) -> None:
        self.schema = suwayomi_schema(version)  # the server's: r2320 (newest recorded) or r1353 (oldest)
        self.version = version
        self.mangas = build_mangas(dt.datetime.now(dt.UTC).replace(microsecond=0))
        self.auth, self.username, self.password = auth, username, password
        self.down = False
        self.webview_sources: set[str] = set()
        self.operations: list[str] = []  # the operation name of every valid document, in order
        self.invalid: list[tuple[str, list[str]]] = []  # (document, its errors against the schema)
        self._tokens: set[str] = set()
        self.server = FixtureServer(self._route, "suwayomi-standin")
        self.base_url = self.server.base_url
        self.host_port = self.server.host_port

    def stop(self) -> None:
        self.server.stop()

    def manga(self, manga_id: int) -> StandinManga:
        return next(m for m in self.mangas if m.id == manga_id)

    def expire_tokens(self) -> None:
        """Every UI_LOGIN token expires (a client must log in again)."""
        self._tokens.clear()

    def publish(self, manga: StandinManga) -> None:
        """A manga new on the source: first in its latest listing from now on."""
        self.mangas = (manga, *self.mangas)

    def listing(self, source_id: str) -> list[StandinManga]:
        return [m for m in self.mangas if m.source_id == source_id]

    # --- HTTP -------------------------------------------------------------------------------

    def _route(self, request: Request) -> Response:
        if self.down:
            return Response(503, b"Service Unavailable", "text/plain")
        is_login = request.method == "POST" and b"login(" in request.body
        if not is_login and not self._authorized(request):
            return Response(401, b"Unauthorized", "text/plain", {"WWW-Authenticate": "Basic"})
        if request.path == "/api/graphql" and request.method == "POST":
            return self._graphql(request.body)
        if match := _THUMBNAIL.match(request.path):
            return png(self.manga(int(match[1])).cover)
        if match := _PAGE.match(request.path):
            manga_id, order, index = (int(g) for g in match.groups())
            chapter = next((c for c in self.manga(manga_id).chapters if c.source_order == order), None)
            if chapter is None or index >= len(chapter.pages):
                return Response(404, b"not found", "text/plain")
            return png(chapter.pages[index])
        return Response(404, b"not found", "text/plain")

    def _authorized(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        if self.auth == "basic":
            pair = f"{self.username}:{self.password}".encode()
            return header == f"Basic {base64.b64encode(pair).decode()}"
        if self.auth == "login":
            return header.removeprefix("Bearer ") in self._tokens
        return True

    def _graphql(self, body: bytes) -> Response:
        try:
            payload = json.loads(body)
            document = parse(payload["query"])
        except (ValueError, KeyError, GraphQLError) as exc:
            return _json({"errors": [{"message": f"bad request: {exc}"}]}, 400)
        errors = validate(self.schema, document)
        if errors:
            self.invalid.append((payload["query"], [e.message for e in errors]))
            return _json({"errors": [e.formatted for e in errors]}, 400)
        self.operations.append(document.definitions[0].name.value)  # type: ignore[attr-defined]
        result = graphql_sync(
            self.schema, payload["query"], root_value=self._root(), variable_values=payload.get("variables")
        )
        return _json(result.formatted)

    # --- resolvers: plain functions on the root value, graphql-core's default resolver calls them ------

    def _root(self) -> dict[str, Any]:
        return {
            "aboutServer": lambda info: {"name": "Suwayomi-Server", "version": SERVER_VERSION},
            "about": lambda info: {"name": "Tachidesk", "version": LEGACY_VERSION},
            "login": self._login,
            "sources": self._sources,
            "extensions": self._extensions,
            "fetchSourceManga": self._fetch_source_manga,
            "fetchManga": self._fetch_manga,
            "fetchChapters": self._fetch_chapters,
            "fetchChapterPages": self._fetch_chapter_pages,
        }

    def _login(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002 - the schema's name
        if (input["username"], input["password"]) != (self.username, self.password):
            raise GraphQLError("Invalid username or password")
        token = f"token-{len(self._tokens) + 1}"
        self._tokens.add(token)
        return {"accessToken": token, "refreshToken": f"refresh-{token}"}

    def _sources(self, info: Any, condition: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
        wanted = {k: v for k, v in (condition or {}).items() if v is not None}
        found = [s for s in SOURCES if all(_source(s)[k] == v for k, v in wanted.items())]
        return {"nodes": [_source(s) for s in found]}

    def _extensions(self, info: Any, condition: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
        name = (condition or {}).get("name")
        found = [e for e in EXTENSIONS if name is None or e.name == name]
        nodes = [{"pkgName": e.pkg_name, "name": e.name, "lang": e.lang, "isInstalled": e.is_installed} for e in found]
        return {"nodes": nodes}

    def _fetch_manga(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
        return {"manga": self._manga(input["id"], fetch=True)}

    def _fetch_source_manga(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
        source = next((s for s in SOURCES if s.id == input["source"]), None)
        if source is None:
            raise GraphQLError(f"Source with id {input['source']} is not installed")
        if source.id in self.webview_sources:
            raise GraphQLError("Log in via WebView to continue")
        if input["type"] == "LATEST" and not source.supports_latest:
            raise GraphQLError("Source doesn't support latest")
        mangas = self.listing(source.id)
        if input["type"] == "POPULAR":
            mangas = sorted(mangas, key=lambda m: m.title)
        elif input["type"] == "SEARCH":
            mangas = [m for m in mangas if (input.get("query") or "").casefold() in m.title.casefold()]
        start = (input["page"] - 1) * LIST_PAGE_SIZE
        shown = mangas[start : start + LIST_PAGE_SIZE]
        return {"mangas": [self._manga(m.id) for m in shown], "hasNextPage": start + LIST_PAGE_SIZE < len(mangas)}

    def _manga(self, manga_id: int, *, fetch: bool = False) -> dict[str, Any]:
        manga = self.manga(manga_id)
        if fetch and manga.source_id in self.webview_sources:
            raise GraphQLError("Log in via WebView to continue")
        return {
            "id": manga.id,
            "title": manga.title,
            "url": manga.url,
            "realUrl": f"https://harbor.example{manga.url}",
            "thumbnailUrl": f"/api/v1/manga/{manga.id}/thumbnail",
            "description": manga.description,
            "author": manga.author.split(", ")[0],
            "artist": manga.author.split(", ")[-1],
            "genre": list(manga.genre),
            "status": manga.status,
        }

    def _fetch_chapters(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
        manga = self.manga(input["mangaId"])
        chapters = [
            {
                "id": c.id,
                "mangaId": c.manga_id,
                "name": c.name,
                "url": f"{manga.url}/{c.source_order}",
                "realUrl": None,
                "chapterNumber": c.chapter_number,
                "scanlator": c.scanlator,
                "uploadDate": str(c.upload_date_ms),
                "sourceOrder": c.source_order,
            }
            for c in manga.chapters
        ]
        return {"chapters": chapters}

    def _fetch_chapter_pages(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
        chapter = next(c for m in self.mangas for c in m.chapters if c.id == input["chapterId"])
        pages = [
            f"/api/v1/manga/{chapter.manga_id}/chapter/{chapter.source_order}/page/{n}"
            for n in range(len(chapter.pages))
        ]
        return {"pages": pages}


def _source(source: Any) -> dict[str, Any]:
    return {
        "id": source.id,
        "name": source.name,
        "displayName": source.display_name,
        "lang": source.lang,
        "isNsfw": source.is_nsfw,
        "supportsLatest": source.supports_latest,
    }


@contextmanager
def suwayomi_standin(**options: Any) -> Iterator[SuwayomiStandin]:
    standin = SuwayomiStandin(**options)
    try:
        yield standin
    finally:
        standin.stop()
