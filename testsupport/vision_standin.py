"""A stand-in for an OpenAI-compatible vision endpoint: a real threaded HTTP server on 127.0.0.1.

Tests script its replies one request at a time (a good answer, malformed
model output, an HTTP error, a hang held open by a gate) and read back what
it received, including the image, to check what the backend sent.
"""

from __future__ import annotations

import base64
import io
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

# A hung reply gives up after this long even if its gate is never opened, so
# a failing test cannot leave a server thread behind forever.
HANG_LIMIT_SECS = 30.0


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    # When set, the reply waits for the gate before it is sent (a hang).
    gate: threading.Event | None = None


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    def image_url(self) -> str:
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                for part in content:
                    if part.get("type") == "image_url":
                        return part["image_url"]["url"]
        raise AssertionError("request carries no image")

    def image_mime(self) -> str:
        return self.image_url().split(";", 1)[0].removeprefix("data:")

    def image(self) -> Image.Image:
        encoded = self.image_url().split(",", 1)[1]
        image = Image.open(io.BytesIO(base64.b64decode(encoded)))
        image.load()
        return image


def completion(content: str, model: str = "standin-vision") -> str:
    """A chat-completions response body whose message content is `content`."""
    return json.dumps(
        {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
    )


def answer_json(
    text: str = "HELLO THERE",
    tags: list[str] | None = None,
    description: str = "Two characters talk on a rooftop.",
    nsfw: bool = False,
    score: float = 0.02,
) -> str:
    """A model answer in the shape the backend asks for."""
    return json.dumps(
        {
            "text": text,
            "tags": tags if tags is not None else ["dialogue", "rooftop"],
            "description": description,
            "nsfw": nsfw,
            "score": score,
        }
    )


@dataclass
class VisionStandIn:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    default: Reply = field(default_factory=lambda: Reply(body=completion(answer_json())))

    def __post_init__(self) -> None:
        self._lock = threading.Condition()
        self._gates: list[threading.Event] = []
        self._server: ThreadingHTTPServer | None = None

    # --- scripting -------------------------------------------------------------------

    def reply(self, reply: Reply) -> Reply:
        with self._lock:
            self.replies.append(reply)
            if reply.gate is not None:
                self._gates.append(reply.gate)
        return reply

    def good(self, **answer: Any) -> Reply:
        return self.reply(Reply(body=completion(answer_json(**answer))))

    def content(self, content: str) -> Reply:
        """The model's message content verbatim (for malformed output)."""
        return self.reply(Reply(body=completion(content)))

    def error(self, status: int, body: str) -> Reply:
        return self.reply(Reply(status=status, body=body))

    def hang(self, then: Reply | None = None) -> threading.Event:
        """Hold the next request open until the returned gate is set, then send `then` (a good answer by default)."""
        gate = threading.Event()
        reply = then or Reply(body=completion(answer_json()))
        self.reply(Reply(status=reply.status, body=reply.body, gate=gate))
        return gate

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> None:
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= count, timeout=timeout):
                raise AssertionError(f"vision stand-in got {len(self.requests)} request(s), expected {count}")

    # --- serving ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "stand-in is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> VisionStandIn:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="vision-standin", daemon=True).start()
        return self

    def stop(self) -> None:
        with self._lock:
            for gate in self._gates:
                gate.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> VisionStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()
            return self.replies.popleft() if self.replies else self.default


def _handler_for(standin: VisionStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unparseable": raw.decode("utf-8", "replace")}
            reply = standin._take(RecordedRequest(self.path, dict(self.headers.items()), body))
            if self.path.rstrip("/") != "/v1/chat/completions":
                reply = Reply(status=404, body=json.dumps({"error": f"no route {self.path}"}))
            if reply.gate is not None:
                reply.gate.wait(HANG_LIMIT_SECS)
            payload = reply.body.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server API
            pass

    return Handler
