"""Every reader's image routes answer with the same headers, from the one responder (catalog.serving).

The web reader, OPDS-PSE, the Komga API and the REST API each serve a page
(and the cover routes a cover) with `Cache-Control: private`, an ETag and
its 304, Content-Length, and byte ranges (206, 416), on local storage and
S3 alike; with `SERVE_ACCEL_REDIRECT` they hand the file to nginx.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from testsupport.responses import body_of

pytestmark = pytest.mark.sqlite_ok

# (route name, URL template, how the client authenticates)
PAGE_ROUTES = [
    ("web reader", "/read/pages/{page}/image/", "session"),
    ("OPDS-PSE", "/opds/chapters/{chapter}/pages/0/", "basic"),
    ("Komga", "/api/v1/books/{chapter}/pages/1", "basic"),
    ("REST", "/api/v1/pages/{page}/image/", "basic"),
]
SAME_HEADERS = {"Cache-Control", "ETag", "Content-Length", "Accept-Ranges", "Content-Type"}


@pytest.fixture
def reader(django_user_model):
    return django_user_model.objects.create_user("alice", "alice@example.com", PASSWORD)


@pytest.fixture
def stored(media_storage):
    src = f.source()
    chapter = f.chapter(f.manga(src=src, cover=True), 1, src=src, pages=1)
    return chapter, chapter.pages.get()


def _client(reader, how: str) -> tuple[APIClient, dict[str, str]]:
    client = APIClient()
    if how == "session":
        client.force_login(reader)
        return client, {}
    return client, basic("alice", PASSWORD)


def _url(template: str, stored) -> str:
    chapter, page = stored
    return template.format(page=page.id, chapter=chapter.id)


@pytest.mark.parametrize(("label", "template", "how"), PAGE_ROUTES, ids=[r[0] for r in PAGE_ROUTES])
def test_every_page_route_answers_the_same_headers(reader, stored, label, template, how):
    client, auth = _client(reader, how)
    url = _url(template, stored)
    page = stored[1]
    whole = client.get(url, **auth)
    assert whole.status_code == 200, label
    assert SAME_HEADERS <= set(whole.headers), label
    assert whole["Cache-Control"] == "private, max-age=86400"
    assert whole["ETag"] == f'"{page.sha256}"' and whole["Accept-Ranges"] == "bytes"
    assert body_of(whole) == page.image.open("rb").read()
    assert int(whole["Content-Length"]) == page.bytes

    again = client.get(url, HTTP_IF_NONE_MATCH=whole["ETag"], **auth)
    assert again.status_code == 304 and again["ETag"] == whole["ETag"] and not body_of(again)
    assert again["Cache-Control"] == "private, max-age=86400"

    part = client.get(url, HTTP_RANGE="bytes=8-15", **auth)
    assert part.status_code == 206 and part["Content-Range"] == f"bytes 8-15/{page.bytes}"
    assert part["Content-Length"] == "8" and body_of(part) == body_of(whole)[8:16]

    past = client.get(url, HTTP_RANGE=f"bytes={page.bytes}-", **auth)
    assert past.status_code == 416 and past["Content-Range"] == f"bytes */{page.bytes}"


def test_an_if_range_for_another_version_gets_the_whole_page(reader, stored):
    client, auth = _client(reader, "basic")
    answer = client.get(
        _url("/api/v1/pages/{page}/image/", stored), HTTP_RANGE="bytes=0-3", HTTP_IF_RANGE='"x"', **auth
    )
    assert answer.status_code == 200 and int(answer["Content-Length"]) == stored[1].bytes


def test_the_rest_api_keeps_an_authenticated_image_private(reader, stored):
    """A shared proxy must not keep a page one user fetched with credentials (it used to say `public`)."""
    client, auth = _client(reader, "basic")
    chapter, page = stored
    for url in (f"/api/v1/pages/{page.id}/image/", f"/api/v1/mangas/{chapter.manga_id}/cover/"):
        answer = client.get(url, **auth)
        assert answer.status_code == 200
        assert answer["Cache-Control"].split(",")[0] == "private", url


@pytest.mark.parametrize(
    "template",
    ["/api/v1/mangas/{manga}/cover/", "/opds/mangas/{manga}/thumbnail/", "/api/v1/series/{manga}/thumbnail"],
)
def test_cover_routes_answer_the_same_headers(reader, stored, template):
    client, auth = _client(reader, "basic")
    answer = client.get(template.format(manga=stored[0].manga_id), **auth)
    assert answer.status_code == 200
    assert SAME_HEADERS - {"ETag"} <= set(answer.headers)
    assert answer["Cache-Control"] == "private, max-age=86400"
    assert int(answer["Content-Length"]) == len(body_of(answer))


def test_accel_redirect_hands_a_local_page_to_nginx_after_the_check(reader, settings, tmp_path):
    settings.SERVE_ACCEL_REDIRECT = "/protected/"
    settings.MEDIA_ROOT = str(tmp_path)
    src = f.source()
    page = f.chapter(f.manga(src=src), 1, src=src, pages=1).pages.get()
    client, auth = _client(reader, "basic")
    answer = client.get(f"/api/v1/pages/{page.id}/image/", **auth)
    assert answer.status_code == 200 and answer["X-Accel-Redirect"] == f"/protected/{page.image.name}"
    assert body_of(answer) == b"" and answer["Cache-Control"] == "private, max-age=86400"
    assert client.get(f"/api/v1/pages/{page.id}/image/").status_code == 401  # no check passed, nothing handed over


def test_accel_redirect_leaves_s3_streaming(reader, settings, s3_storage):
    settings.SERVE_ACCEL_REDIRECT = "/protected/"
    src = f.source()
    page = f.chapter(f.manga(src=src), 1, src=src, pages=1).pages.get()
    client, auth = _client(reader, "basic")
    answer = client.get(f"/api/v1/pages/{page.id}/image/", **auth)
    assert "X-Accel-Redirect" not in answer and len(body_of(answer)) == page.bytes
