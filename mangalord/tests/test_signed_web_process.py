"""Signed page URLs through the documented web process (`manage.py serve`: Granian): the chapter page's and the PSE
feed's URLs open their pages, from a real server in a subprocess against this test's database."""

from __future__ import annotations

import base64

import httpx
import pytest
from django.test import Client

from mangalord.tests.test_signed_pse import stream_link
from mangalord.tests.test_signed_routes import reader_data
from reader.models import ReadProgress
from reader.tests import factories as f
from testsupport.live_server import start_web_process

REPO_ROOT = __file__.rsplit("/mangalord/", 1)[0]

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web(child_env):
    server = start_web_process(child_env, cwd=REPO_ROOT)
    try:
        yield server
    finally:
        server.stop()
        print(f"--- web process log ---\n{server.log()}")


def test_signed_pages_through_the_web_process(web, alice):
    src = f.source()
    chapter = f.chapter(f.manga(src=src), 1, src=src, pages=2)
    session = Client()
    session.force_login(alice)
    page_url = reader_data(session, chapter)["pages"][1]["full"]
    basic = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"alice:alice-password").decode()}
    pse = stream_link(Client(), chapter, **basic).removeprefix("http://testserver")
    with httpx.Client(base_url=web.url, timeout=20) as http:  # no cookie, no password: the URL carries the check
        page = http.get(page_url)
        stored = chapter.pages.get(index=1).image.open("rb").read()
        assert page.status_code == 200 and page.content == stored
        assert page.headers["x-content-type-options"] == "nosniff" and "set-cookie" not in page.headers
        assert http.get(page_url, headers={"If-None-Match": page.headers["etag"]}).status_code == 304
        assert http.get(page_url.replace("/pages/", "/pages/x")).status_code == 404
        streamed = http.get(pse.replace("{pageNumber}", "1").replace("{maxWidth}", ""))
        assert streamed.status_code == 200 and streamed.content == stored
    assert ReadProgress.objects.get(user=alice, chapter=chapter).last_page == 2
