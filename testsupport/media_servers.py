"""Stand-in Komga and Kavita servers on 127.0.0.1 that check every request against the servers' own OpenAPI.

Komga: `reader/tests/schemas/komga/openapi.json` (Komga 1.26.3, gotson/komga `komga/docs/openapi.json`).
Kavita: `testsupport/schemas/kavita/openapi.json` (Kavita's published `openapi.json`, built against
v0.8.3.2; the two operations a rescan uses, see that folder's README).

Each request is matched to an operation by path template and method; its
path, query and header parameters are checked against their schemas (the
query's text converted to the declared type first), unknown query
parameters are refused, and the global security requirement must be met
(an `X-API-Key` or Basic header for Komga, a `Bearer` JWT for Kavita).
Every answer is checked against the operation's declared responses too. A
request that fails gets a 400 and lands in `errors`; tests assert it stays
empty and read `calls` to see what was asked.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from jsonschema import Draft202012Validator
from openapi_schema_validator import OAS30Validator

from testsupport.http_server import QuietHandler, serving

ROOT = Path(__file__).resolve().parent.parent
KOMGA_SPEC = ROOT / "reader" / "tests" / "schemas" / "komga" / "openapi.json"
KAVITA_SPEC = ROOT / "testsupport" / "schemas" / "kavita" / "openapi.json"


@dataclass
class Call:
    operation: str
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int = 0


Answer = tuple[int, Any]  # status, JSON body (None: no body)


@dataclass
class OpenApiStandIn:
    spec: dict[str, Any]
    answers: dict[str, Callable[[Call], Answer]]
    calls: list[Call] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def validator(self, schema: dict[str, Any]) -> Any:
        resolver_root = {**schema, "components": self.spec.get("components", {})}
        if self.spec["openapi"].startswith("3.0"):
            return OAS30Validator(resolver_root)
        return Draft202012Validator(resolver_root)

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any], dict[str, str]] | None:
        for template, item in self.spec["paths"].items():
            pattern = "^" + re.sub(r"\\\{([^}]+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"
            match = re.match(pattern, path)
            if match and method.lower() in item:
                return template, item[method.lower()], match.groupdict()
        return None

    def check(self, call: Call, operation: dict[str, Any], path_values: dict[str, str]) -> list[str]:
        problems = []
        declared = {(p["in"], p["name"]): p for p in operation.get("parameters", [])}
        for name in call.query:
            if ("query", name) not in declared:
                problems.append(f"query parameter {name!r} is not declared by {call.operation}")
        for (where, name), parameter in declared.items():
            value = {"path": path_values, "query": call.query}.get(where, {}).get(name)
            if where == "header":
                value = call.headers.get(name.lower())
            if value is None:
                if parameter.get("required"):
                    problems.append(f"required {where} parameter {name!r} is missing")
                continue
            typed = _typed(value, parameter.get("schema", {}))
            for error in self.validator(parameter.get("schema", {})).iter_errors(typed):
                problems.append(f"{where} parameter {name}={value!r}: {error.message}")
        requirements = operation.get("security", self.spec.get("security", []))
        if requirements and not any(self._satisfied(r, call.headers) for r in requirements):
            problems.append(f"no security requirement of {call.operation} is met: {requirements}")
        return problems

    def _satisfied(self, requirement: dict[str, Any], headers: dict[str, str]) -> bool:
        schemes = self.spec["components"]["securitySchemes"]
        for name in requirement:
            scheme = schemes[name]
            if scheme["type"] == "apiKey" and scheme["in"] == "header":
                value = headers.get(scheme["name"].lower(), "")
                if not value or (scheme["name"] == "Authorization" and not value.startswith("Bearer ")):
                    return False
            elif scheme["type"] == "http" and scheme.get("scheme") == "basic":
                if not headers.get("authorization", "").startswith("Basic "):
                    return False
        return True

    def check_answer(self, call: Call, operation: dict[str, Any], status: int, body: Any) -> list[str]:
        response = operation["responses"].get(str(status))
        if response is None:
            # Both servers answer a bad key 401 and a bad id 400 without declaring every error: only success is held
            # to the document.
            return [] if status >= 400 and body is None else [f"{call.operation} declares no {status} response"]
        content = response.get("content", {})
        if body is None:
            return []
        schema = (content.get("application/json") or content.get("*/*") or {}).get("schema")
        if schema is None:
            return [f"{call.operation}'s {status} response declares no JSON body"]
        return [f"answer: {e.message}" for e in self.validator(schema).iter_errors(body)]


def _typed(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "boolean":
        return {"true": True, "false": False}.get(value, value)
    if kind == "integer":
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _handler(stand_in: OpenApiStandIn) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self._handle("POST")

        def do_GET(self) -> None:  # noqa: N802
            self._handle("GET")

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            found = stand_in.operation(method, parts.path)
            if found is None:
                self._send(404, None)
                with stand_in.lock:
                    stand_in.errors.append(f"{method} {parts.path} is no operation of the API")
                return
            template, operation, path_values = found
            call = Call(operation.get("operationId", template), method, parts.path, query, headers)
            problems = stand_in.check(call, operation, path_values)
            if problems:
                status, body = 400, None
            else:
                status, body = stand_in.answers.get(call.operation, lambda c: (200, None))(call)
                problems = stand_in.check_answer(call, operation, status, body)
            call.status = status
            with stand_in.lock:
                stand_in.calls.append(call)
                stand_in.errors.extend(problems)
            self._send(status, body)

        def _send(self, status: int, body: Any) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def komga(api_key: str, library_id: str) -> Iterator[tuple[str, OpenApiStandIn]]:
    """A Komga that accepts `libraryScan` of `library_id` with `api_key` (202), 401 for another key, 400 another id."""

    def scan(call: Call) -> Answer:
        if call.headers.get("x-api-key") != api_key:
            return 401, None
        if call.path.rsplit("/", 2)[-2] != library_id:
            return 400, {"violations": [{"fieldName": "libraryId", "message": "no such library"}]}
        return 202, None

    stand_in = OpenApiStandIn(json.loads(KOMGA_SPEC.read_text()), {"libraryScan": scan})
    with serving(_handler(stand_in)) as url:
        yield url, stand_in


@contextmanager
def kavita(api_key: str, library_id: int) -> Iterator[tuple[str, OpenApiStandIn]]:
    """A Kavita that trades `api_key` for a JWT (Plugin/authenticate) and scans `library_id` for that JWT."""
    token = secrets.token_urlsafe(24)

    def authenticate(call: Call) -> Answer:
        if call.query.get("apiKey") != api_key:
            return 401, None
        user = {"username": "admin", "email": None, "token": token, "refreshToken": "r", "apiKey": api_key}
        return 200, {**user, "kavitaVersion": "0.8.3.2"}

    def scan(call: Call) -> Answer:
        if call.headers.get("authorization") != f"Bearer {token}":
            return 401, None
        if call.query.get("libraryId") != str(library_id):
            return 400, None
        return 200, None

    spec = json.loads(KAVITA_SPEC.read_text())
    # Kavita's document names no operationId: the stand-in keys its answers by path.
    for path, item in spec["paths"].items():
        item["post"].setdefault("operationId", path)
    # The document repeats its global Bearer requirement on every operation, but the controller marks
    # `authenticate` [AllowAnonymous] (API/Controllers/PluginController.cs): it is how a key gets its token.
    spec["paths"]["/api/Plugin/authenticate"]["post"]["security"] = []
    stand_in = OpenApiStandIn(spec, {"/api/Plugin/authenticate": authenticate, "/api/Library/scan": scan})
    with serving(_handler(stand_in)) as url:
        yield url, stand_in
