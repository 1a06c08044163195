"""The documented web process (`manage.py serve`: Granian, two workers) serves readers and the dashboard's stream.

A real server in a subprocess against this test's database: a reader app's
page request with Basic credentials (the responder's headers, the pooled
database connections), and a staff member's Server-Sent Events stream, which
must stream (first event, then keep-alive comments) rather than be buffered.
"""

from __future__ import annotations

import base64

import httpx
import pytest
from django.test import Client

from reader.tests import factories as f
from testsupport.live_server import start_web_process

REPO_ROOT = __file__.rsplit("/mangalord/", 1)[0]

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web(child_env):
    server = start_web_process(dict(child_env, CRAWLER_STREAM_KEEPALIVE_SECS="1"), cwd=REPO_ROOT)
    try:
        yield server
    finally:
        server.stop()
        print(f"--- web process log ---\n{server.log()}")


def test_pages_and_the_status_stream_through_the_web_process(web, alice, staff):
    src = f.source()
    chapter = f.chapter(f.manga(src=src), 1, src=src, pages=2)
    auth = {"Authorization": "Basic " + base64.b64encode(b"alice:alice-password").decode()}
    with httpx.Client(base_url=web.url, timeout=20) as http:
        for number in (1, 2, 1):  # the second ask of page 1 comes from a remembered credential and a pooled connection
            page = http.get(f"/api/v1/books/{chapter.id}/pages/{number}", headers=auth)
            assert page.status_code == 200 and page.headers["cache-control"] == "private, max-age=86400"
            assert int(page.headers["content-length"]) == len(page.content) > 0
        assert http.get(f"/api/v1/books/{chapter.id}/pages/1").status_code == 401

    session = Client()
    session.force_login(staff)
    cookies = {"sessionid": session.cookies["sessionid"].value}
    with (
        httpx.Client(base_url=web.url, cookies=cookies, timeout=20) as http,
        http.stream("GET", "/api/v1/admin/crawler/stream/") as stream,
    ):
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert any(line.startswith("data:") for line, _ in zip(lines, range(50), strict=False))
        assert any(
            line.startswith(":") for line, _ in zip(lines, range(50), strict=False)
        )  # a keep-alive: still streaming
