"""Page and cover requests skip Django's ASGI middleware adapters: the whole request runs in one worker thread.

Under ASGI, Django runs a sync view behind an async middleware chain in
which every `MiddlewareMixin` middleware (sessions, auth, CSRF, messages,
security, ...) sends its request half and its response half through a thread
hop of its own: about a dozen hops for one page image, which cost more than
the view. A reader app asks for pages eight at a time, one after another, so
for the image routes (`IMAGE_PATHS`, GET and HEAD only) this wrapper hands
the request to Django's WSGI handler, whole, in a worker thread: the same
middleware, views and responder, one hop in. The response is closed in that
thread, so the request's database connection goes back to the pool from the
thread that borrowed it. The last block (for most pages the whole answer,
status and body together) comes back to the event loop as the thread's
result and is sent from there: no second hop into the loop. A longer body's
earlier blocks are sent from the thread as they are read. Every other
request, the dashboard's event stream included, goes to the ASGI
application unchanged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.wsgi import WsgiToAsgiInstance

IMAGE_PATHS = re.compile(
    r"^/(?:key/[A-Za-z0-9_-]+/)?(?:"
    r"api/v1/books/[^/]+/(?:pages/\d+|thumbnail)"
    r"|api/v1/series/[^/]+/thumbnail"
    r"|api/v1/pages/[^/]+/image/"
    r"|api/v1/mangas/[^/]+/cover/"
    r"|read/pages/[^/]+/image/"
    r"|opds/chapters/[^/]+/pages/\d+/"
    r"|opds/mangas/[^/]+/thumbnail/"
    r")$"
)

Asgi = Callable[..., Any]
Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def runs_in_one_thread(scope: dict[str, Any]) -> bool:
    """Whether this request is an image read that skips the ASGI adapters. Pure."""
    return scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and bool(IMAGE_PATHS.match(scope["path"]))


def environ(scope: dict[str, Any]) -> dict[str, Any]:
    """The WSGI environ of an ASGI scope with no body (asgiref's translation)."""
    translator = WsgiToAsgiInstance(None)
    translator.scope = scope
    return translator.build_environ(scope, _EmptyBody())


class _EmptyBody:
    def read(self, *args: Any) -> bytes:
        return b""

    def readline(self, *args: Any) -> bytes:
        return b""


class SyncRoutes:
    """ASGI application: image reads to `wsgi` in one of `threads` worker threads, the rest to `asgi`."""

    def __init__(self, asgi: Asgi, wsgi: Wsgi, threads: int) -> None:
        self.asgi = asgi
        self.wsgi = wsgi
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="page")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not runs_in_one_thread(scope):
            await self.asgi(scope, receive, send)
            return
        while (message := await receive())["type"] == "http.request" and message.get("more_body"):
            pass  # a GET's body, if any, is not read
        loop = asyncio.get_running_loop()
        for message in await loop.run_in_executor(self.pool, self._respond, scope, send, loop):
            await send(message)

    def _respond(self, scope: dict[str, Any], send: Any, loop: asyncio.AbstractEventLoop) -> list[dict[str, Any]]:
        """Run the request; send all but the last block from here, and return the messages still to send."""
        started: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            started["status"] = int(status.split(" ", 1)[0])
            started["headers"] = [(k.lower().encode("latin1"), v.encode("latin1")) for k, v in headers]

        def deliver(*messages: dict[str, Any]) -> None:
            asyncio.run_coroutine_threadsafe(_send_all(send, messages), loop).result()

        result = self.wsgi(environ(scope), start_response)
        try:
            head = {"type": "http.response.start", "status": started["status"], "headers": started["headers"]}
            pending: bytes | None = None
            for chunk in result:
                if pending is not None:
                    deliver(*_with_head(head, pending, more=True))
                    head = {}
                pending = chunk
            return _with_head(head, pending or b"", more=False)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()


def _with_head(head: dict[str, Any], body: bytes, *, more: bool) -> list[dict[str, Any]]:
    message = {"type": "http.response.body", "body": body, "more_body": more}
    return [head, message] if head else [message]


async def _send_all(send: Any, messages: tuple[dict[str, Any], ...]) -> None:
    for message in messages:
        await send(message)
