"""Requests to a Suwayomi-Server's GraphQL endpoint through the source's guarded transport and gate.

Each call is one POST to `{server}/api/graphql` through `SourceHttp`, so it
passes the outbound guard, the source's politeness gate and its deadlines
like every page of an HTML source. Credentials: BASIC_AUTH sends the
`Authorization: Basic` header with every request (images included); the
newer UI_LOGIN mode trades username and password for a token with the
`login` mutation, sent as `Authorization: Bearer` (asked again once when the
server answers 401, as tokens expire).
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import urljoin

from sources.answers import raise_for_status
from sources.errors import CrawlerError, SourceConfigError
from sources.http import SourceHttp
from sources.suwayomi import answers, queries
from sources.suwayomi.answers import MalformedAnswer
from sources.suwayomi.config import SuwayomiConfig
from sources.suwayomi.failures import error_for

GRAPHQL_PATH = "api/graphql"


def basic_auth_header(config: SuwayomiConfig) -> dict[str, str]:
    """The header BASIC_AUTH servers want on every request (none for other modes)."""
    if config.auth != "basic":
        return {}
    pair = f"{config.username}:{config.password}".encode()
    return {"Authorization": f"Basic {base64.b64encode(pair).decode('ascii')}"}


class SuwayomiClient:
    def __init__(self, source_id: str, server: str, config: SuwayomiConfig, http: SourceHttp) -> None:
        self.source_id = source_id
        self.server = server
        self.endpoint = urljoin(server, GRAPHQL_PATH)
        self.config = config
        self._http = http
        self.label = repr(config.source)  # replaced by the server's own name once the source is resolved
        self._bearer: dict[str, str] = {}  # UI_LOGIN's token header, once logged in

    def call(self, document: str, variables: dict[str, Any], *, what: str) -> Any:
        """The `data` of the answer to `document`; GraphQL errors become the crawler's error kinds (failures)."""
        if self.config.auth == "login" and not self._bearer:
            self._login()
        status, reply = self._post(document, variables, what=what)
        if status == 401 and self.config.auth == "login":
            self._login()
            status, reply = self._post(document, variables, what=what)
        self._check_status(status, what)
        errors = reply.get("errors") if isinstance(reply, dict) else None
        if errors:
            messages = [str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors]
            raise error_for(self.source_id, self.label, what, messages)
        if not isinstance(reply, dict) or not isinstance(reply.get("data"), dict):
            raise MalformedAnswer(f"source {self.source_id!r}: {self.endpoint} answered {what} without data")
        return reply["data"]

    def _post(self, document: str, variables: dict[str, Any], *, what: str) -> tuple[int, Any]:
        body = json.dumps({"query": document, "variables": variables}).encode()
        page = self._http.request_page(
            self.endpoint,
            method="POST",
            data=body,
            headers={"Content-Type": "application/json", "Accept": "application/json", **self._bearer},
            check=False,
        )
        if page.status >= 400:
            return page.status, None
        try:
            return page.status, json.loads(page.html)
        except ValueError as exc:
            raise SourceConfigError(
                f"source {self.source_id!r}: {self.endpoint} answered {what} with no JSON ({page.content_type or 'no type'}):"
                f" is base_url a Suwayomi-Server?"
            ) from exc

    def _check_status(self, status: int, what: str) -> None:
        if status in (401, 403):
            given = (
                "the server refused suwayomi_username/suwayomi_password"
                if self.config.auth
                else (
                    "the server has auth on: set suwayomi_username and suwayomi_password (and suwayomi_auth 'login' "
                    "when its auth mode is UI_LOGIN)"
                )
            )
            raise SourceConfigError(f"source {self.source_id!r}: {self.endpoint} answered {status} to {what}: {given}")
        if status == 404:
            raise SourceConfigError(
                f"source {self.source_id!r}: {self.endpoint} answered 404: is base_url a Suwayomi-Server?"
            )
        raise_for_status(self.source_id, status, self.endpoint)

    def _login(self) -> None:
        self._bearer = {}
        variables = {"username": self.config.username, "password": self.config.password}
        status, reply = self._post(queries.LOGIN, variables, what="login")
        self._check_status(status, "login")
        if isinstance(reply, dict) and reply.get("errors"):
            raise SourceConfigError(
                f"source {self.source_id!r}: Suwayomi at {self.server} refused the login of suwayomi_username "
                f"{self.config.username!r}: {reply['errors'][0].get('message', reply['errors'][0])}"
            )
        token = answers.read_access_token(reply.get("data") if isinstance(reply, dict) else None)
        self._bearer = {"Authorization": f"Bearer {token}"}
        # On the transport's own headers too: image downloads read them for each request.
        self._http.headers.update(self._bearer)

    # --- the queries the adapter makes ------------------------------------------------------

    def server_version(self) -> str:
        """The server's version; older servers name the query `about`, and know nothing of `aboutServer`."""
        try:
            reply = self.call(queries.ABOUT, {}, what="the aboutServer query")
        except CrawlerError:
            reply = self.call(queries.ABOUT_LEGACY, {}, what="the about query")
            return answers.read_server_version(reply, "about")
        return answers.read_server_version(reply)

    def sources(self, source_id: str | None = None) -> list[answers.ServerSource]:
        """The server's sources: every one, or the one of `source_id` (an empty list when it has none)."""
        if source_id is None:
            return answers.read_sources(self.call(queries.SOURCES, {}, what="the sources query"))
        reply = self.call(queries.SOURCE_BY_ID, {"id": source_id}, what=f"the sources query for id {source_id}")
        return answers.read_sources(reply)

    def extensions(self, name: str) -> list[answers.ServerExtension]:
        reply = self.call(queries.EXTENSIONS, {"name": name}, what="the extensions query")
        return answers.read_extensions(reply)

    def manga_page(self, source: str, listing: str, page: int) -> answers.MangaPage:
        variables = {"source": source, "type": listing, "page": page, "query": None}
        reply = self.call(queries.SOURCE_MANGA, variables, what=f"{listing} list page {page}")
        return answers.read_manga_page(reply)

    def manga(self, manga_id: int) -> answers.ServerManga:
        return answers.read_fetched_manga(self.call(queries.MANGA, {"id": manga_id}, what=f"manga {manga_id}"))

    def chapters(self, manga_id: int) -> list[answers.ServerChapter]:
        reply = self.call(queries.CHAPTERS, {"mangaId": manga_id}, what=f"the chapters of manga {manga_id}")
        return answers.read_chapters(reply)

    def pages(self, chapter_id: int) -> tuple[str, ...]:
        reply = self.call(queries.CHAPTER_PAGES, {"chapterId": chapter_id}, what=f"the pages of chapter {chapter_id}")
        return answers.read_pages(reply)
