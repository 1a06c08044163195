"""A webhook receiver on 127.0.0.1 for Apprise's `json://` service, validating every request it gets.

The schema is the body Apprise 2.3.0's Custom JSON service posts (`apprise/plugins/custom_json.py`, documented in
Apprise's wiki page "Notify_Custom_JSON"): `version` "1.0", `title`, `message`, `attachments` (a list) and `type`
(one of Apprise's notify types), as `Content-Type: application/json`. A request that is not of that shape fails the
test that reads it; `fail_with` makes the receiver answer an error status, as a broken service would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from testsupport.http_server import QuietHandler, serving

APPRISE_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["version", "title", "message", "attachments", "type"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": "1.0"},
        "title": {"type": "string"},
        "message": {"type": "string"},
        "attachments": {"type": "array"},
        "type": {"enum": ["info", "success", "warning", "failure"]},
    },
}


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    authorization: str | None


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    fail_with: int | None = None
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def apprise_url(self, path: str = "hook", credentials: str = "") -> str:
        host = self.url.removeprefix("http://")
        return f"json://{credentials + '@' if credentials else ''}{host}/{path}"


@contextmanager
def json_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with receiver.lock:
                receiver.requests += 1
                failing = receiver.fail_with
            if failing:
                self.send_response(failing)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            assert self.headers.get("Content-Type", "").startswith("application/json")
            body = json.loads(raw)
            jsonschema.validate(body, APPRISE_JSON_SCHEMA)
            with receiver.lock:
                receiver.received.append(Received(self.path, body, self.headers.get("Authorization")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving(Handler) as url:
        receiver.url = url
        yield receiver
