"""Image reads run whole in one worker thread (mangalord/sync_routes.py); everything else stays ASGI."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mangalord.sync_routes import SyncRoutes, environ, runs_in_one_thread


def scope(path: str, method: str = "GET", kind: str = "http") -> dict:
    return {
        "type": kind, "method": method, "path": path, "root_path": "", "query_string": b"w=720",
        "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 8000), "client": ("10.0.0.9", 5000),
        "headers": [(b"authorization", b"Basic eDp5"), (b"host", b"example.org")],
    }  # fmt: skip


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/books/b1/pages/3",
        "/api/v1/books/b1/thumbnail",
        "/api/v1/series/s1/thumbnail",
        "/api/v1/pages/p1/image/",
        "/api/v1/mangas/m1/cover/",
        "/read/pages/p1/image/",
        "/opds/chapters/c1/pages/0/",
        "/opds/mangas/m1/thumbnail/",
        "/key/mk_abcdefgh123/opds/chapters/c1/pages/0/",
    ],
)
def test_image_reads_run_in_one_thread(path):
    assert runs_in_one_thread(scope(path)) and runs_in_one_thread(scope(path, "HEAD"))


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/v1/admin/crawler/stream/", "GET"),
        ("/api/v1/books/b1/read-progress", "PATCH"),
        ("/api/v1/pages/p1/image/", "POST"),
        ("/opds/chapters/c1/cbz/", "GET"),
        ("/api/v1/books/b1/pages", "GET"),
    ],
)
def test_everything_else_stays_asgi(path, method):
    assert not runs_in_one_thread(scope(path, method))


def test_websocket_scopes_stay_asgi():
    assert not runs_in_one_thread(scope("/read/pages/p1/image/", kind="websocket"))


def test_the_environ_carries_the_request():
    env = environ(scope("/read/pages/p1/image/"))
    assert env["PATH_INFO"] == "/read/pages/p1/image/" and env["QUERY_STRING"] == "w=720"
    assert env["HTTP_AUTHORIZATION"] == "Basic eDp5" and env["REMOTE_ADDR"] == "10.0.0.9"
    assert env["wsgi.input"].read() == b""


def _run(app, request_scope):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(request_scope, receive, send))
    return sent


def test_a_streamed_body_is_sent_block_by_block_from_the_thread_that_ran_the_view():
    seen = {}

    def wsgi(env, start_response):
        seen["view"] = threading.current_thread().name
        start_response("206 Partial Content", [("Content-Type", "image/png"), ("Content-Length", "6")])

        class Body:
            def __iter__(self):
                yield b"abc"
                yield b"def"

            def close(self):
                seen["close"] = threading.current_thread().name

        return Body()

    async def asgi(s, r, send):
        raise AssertionError("an image read went to the ASGI app")

    sent = _run(SyncRoutes(asgi, wsgi, threads=2), scope("/api/v1/pages/p1/image/"))
    assert sent[0] == {
        "type": "http.response.start",
        "status": 206,
        "headers": [(b"content-type", b"image/png"), (b"content-length", b"6")],
    }
    assert [(m["body"], m["more_body"]) for m in sent[1:]] == [(b"abc", True), (b"def", False)]
    assert seen["view"] == seen["close"] and seen["view"].startswith("page")


def test_other_requests_reach_the_asgi_app():
    reached = []

    async def asgi(s, r, send):
        reached.append(s["path"])

    _run(SyncRoutes(asgi, lambda e, s: [], threads=1), scope("/api/v1/admin/crawler/stream/"))
    assert reached == ["/api/v1/admin/crawler/stream/"]


def test_a_one_block_answer_is_closed_in_the_view_thread_and_sent_whole_from_the_loop():
    seen = {}

    def wsgi(env, start_response):
        seen["view"] = threading.current_thread().name
        start_response("200 OK", [("Content-Length", "3")])

        class Body:
            def __iter__(self):
                yield b"abc"

            def close(self):
                seen["close"] = threading.current_thread().name

        return Body()

    async def asgi(s, r, send):
        raise AssertionError("an image read went to the ASGI app")

    senders = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        senders.append((threading.current_thread().name, message))

    asyncio.run(SyncRoutes(asgi, wsgi, threads=1)(scope("/read/pages/p1/image/"), receive, send))
    assert [m for _, m in senders] == [
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"3")]},
        {"type": "http.response.body", "body": b"abc", "more_body": False},
    ]
    assert {name for name, _ in senders} == {threading.main_thread().name}
    assert seen["view"] == seen["close"] and seen["view"].startswith("page")
