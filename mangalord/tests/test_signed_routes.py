"""Web reader pages by signed URL (mangalord/signed_routes.py): minted by the chapter page, served without Django.

The answer is the one responder's (catalog.serving) header for header, with
the security headers Django's middleware adds, and no database query; only
the name the URL signed is opened, inside MEDIA_ROOT.
"""

from __future__ import annotations

import asyncio
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client

from catalog.serving.signing import PAGE_PREFIX, expiry
from mangalord.signed_routes import SignedRoutes, media_path
from reader.tests import factories as f

pytestmark = pytest.mark.sqlite_ok

# Headers the Django route and the signed route must agree on (Vary: Cookie is Django's alone: no cookie is read).
SAME = ("content-type", "content-length", "cache-control", "etag", "accept-ranges", "content-range",
        "x-content-type-options", "referrer-policy", "cross-origin-opener-policy", "x-frame-options",
        "strict-transport-security")  # fmt: skip


class Fallback:
    """The application behind the handler: records what reached it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send):
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 418, "headers": []})
        await send({"type": "http.response.body", "body": b"django"})


@pytest.fixture
def app():
    pool = ThreadPoolExecutor(2)
    yield SignedRoutes(Fallback(), pool)
    pool.shutdown()


def call(app, path: str, *, method: str = "GET", headers: dict[str, str] | None = None, scheme: str = "http"):
    """(status, headers, body) of one request through the ASGI app."""
    raw_path, _, query = path.partition("?")
    sent = []
    scope = {
        "type": "http", "method": method, "path": raw_path, "query_string": query.encode(), "root_path": "",
        "scheme": scheme, "http_version": "1.1", "server": ("127.0.0.1", 8000), "client": ("10.0.0.9", 5000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"host": "testserver", **(headers or {})}.items()],
    }  # fmt: skip

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = sent[0]
    answer_headers = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], answer_headers, b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture
def chapter(db):
    src = f.source()
    return f.chapter(f.manga(src=src), 1, src=src, pages=3)


def reader_data(client: Client, chapter) -> dict:
    page = client.get(f"/read/{chapter.id}/")
    assert page.status_code == 200
    found = re.search(rb'<script id="reader-data" type="application/json">(.*?)</script>', page.content, re.S)
    return json.loads(found.group(1))


def signed_url(alice, chapter) -> str:
    client = Client()
    client.force_login(alice)
    return reader_data(client, chapter)["pages"][0]["full"]


def test_the_chapter_page_hands_a_signed_in_reader_signed_urls_of_its_pages(alice, chapter):
    client = Client()
    client.force_login(alice)
    data = reader_data(client, chapter)
    pages = list(chapter.pages.order_by("index"))
    for shown, page in zip(data["pages"], pages, strict=True):
        assert shown["full"].startswith(PAGE_PREFIX) and shown["full"].endswith(
            f"/{alice.pk}/{page.sha256}/{page.image.name}"
        )
        assert shown["scaled"] == f"/read/pages/{page.id}/image/"  # scaled copies keep their route


def test_an_anonymous_reader_of_an_open_library_gets_no_signed_url(chapter, settings):
    settings.LIBRARY_PUBLIC_READ = True
    data = reader_data(Client(), chapter)
    assert all(not p["full"].startswith(PAGE_PREFIX) for p in data["pages"])


@pytest.fixture
def inactive(django_user_model):
    return django_user_model.objects.create_user("ian", "ian@example.com", "ian-password", is_active=False)


def test_a_stranger_and_an_inactive_user_get_no_chapter_page_and_no_url(chapter, inactive):
    assert Client().get(f"/read/{chapter.id}/").status_code == 302
    client = Client()
    client.force_login(inactive)
    assert client.get(f"/read/{chapter.id}/").status_code == 302


def test_no_signed_url_when_turned_off(alice, chapter, settings):
    settings.SERVE_SIGNED_URLS = False
    assert not signed_url(alice, chapter).startswith(PAGE_PREFIX)


def test_no_signed_url_on_s3_storage(alice, chapter, s3_storage):
    assert not signed_url(alice, chapter).startswith(PAGE_PREFIX)


def test_a_signed_page_is_served_with_no_database_query(app, alice, chapter, django_assert_num_queries):
    url = signed_url(alice, chapter)
    page = chapter.pages.get(index=0)
    with django_assert_num_queries(0):
        status, headers, body = call(app, url)
    assert status == 200 and body == page.image.open("rb").read()
    assert headers["etag"] == f'"{page.sha256}"' and headers["content-type"] == "image/png"
    assert app.app.paths == []


@pytest.mark.parametrize(
    "headers",
    [{}, {"Range": "bytes=0-9"}, {"Range": "bytes=-5"}, {"Range": "bytes=99999-"}, {"If-None-Match": "*"}],
    ids=["whole", "range", "suffix", "past the end", "304"],
)
def test_the_answer_is_the_django_routes_header_for_header(app, alice, chapter, headers, settings):
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    page = chapter.pages.get(index=0)
    client = Client()
    client.force_login(alice)
    if headers.get("If-None-Match"):
        headers = {"If-None-Match": f'"{page.sha256}"'}
    meta = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    django = client.get(f"/read/pages/{page.id}/image/", HTTP_X_FORWARDED_PROTO="https", **meta)
    status, lean, body = call(app, signed_url(alice, chapter), headers={**headers, "X-Forwarded-Proto": "https"})
    assert status == django.status_code
    assert {k: lean.get(k) for k in SAME} == {k: django.headers.get(k) for k in SAME}
    assert body == b"".join(django.streaming_content) if django.streaming else body == django.content


def test_a_head_answers_the_headers_and_no_body(app, alice, chapter):
    status, headers, body = call(app, signed_url(alice, chapter), method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


def test_a_file_larger_than_one_block_is_sent_whole(app, alice, tmp_path, settings, db):
    src = f.source()
    chapter = f.chapter(f.manga(src=src), 1, src=src)
    page = f.page(chapter, 0, f.image_bytes(700, 700, fmt="PNG") + b"\0" * (600 * 1024))
    status, headers, body = call(app, signed_url(alice, chapter))
    stored = page.image.open("rb").read()
    assert status == 200 and body == stored and int(headers["content-length"]) == len(stored) > 512 * 1024


def test_an_expired_url_is_refused(app, alice, chapter, monkeypatch):
    url = signed_url(alice, chapter)
    until = int(url[len(PAGE_PREFIX) :].split("/")[1])
    monkeypatch.setattr("mangalord.signed_routes.time.time", lambda: until)
    status, headers, body = call(app, url)
    assert status == 403 and body == b"Forbidden.\n" and "etag" not in headers


def test_a_url_for_one_page_does_not_open_another(app, alice, chapter):
    first, second = chapter.pages.order_by("index")[:2]
    url = signed_url(alice, chapter)
    status, _, body = call(app, url.replace(first.image.name, second.image.name))
    assert status == 403 and body == b"Forbidden.\n"


def test_a_url_signed_with_another_key_is_refused(app, alice, chapter, settings):
    url = signed_url(alice, chapter)
    settings.SERVE_SIGNING_KEY = "another-key-" + "x" * 30
    assert call(app, url)[0] == 403


def test_a_malformed_signed_path_is_not_found(app):
    status, _, body = call(app, "/signed/pages/nothing/here")
    assert status == 404 and body == b"Not found.\n"


def test_a_missing_file_is_not_found(app, alice, chapter):
    url = signed_url(alice, chapter)
    chapter.pages.get(index=0).image.delete(save=False)
    assert call(app, url)[0] == 404


def test_media_path_opens_only_inside_media_root(tmp_path):
    root = str(tmp_path / "media")
    assert media_path("pages/c/1.png", root) == f"{root}/pages/c/1.png"
    for name in ("../secret.png", "pages/../../secret.png", "/etc/passwd", "", "."):
        assert media_path(name, root) is None


def test_a_disallowed_host_is_a_400_as_in_django(app, alice, chapter):
    assert call(app, signed_url(alice, chapter), headers={"host": "evil.example"})[0] == 400


def test_other_requests_reach_django_unchanged(app, alice, chapter, settings):
    url = signed_url(alice, chapter)
    assert call(app, "/read/pages/x/image/")[0] == 418
    assert call(app, url, method="POST")[0] == 418
    settings.SERVE_SIGNED_URLS = False  # turned off: outstanding URLs open nothing (Django has no such route)
    assert call(app, url)[0] == 418
    settings.SERVE_SIGNED_URLS = True
    settings.SECURE_SSL_REDIRECT = True  # Django redirects plain HTTP before anything else
    assert call(app, url)[0] == 418
    assert call(app, url, scheme="https")[0] == 200
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # HTTPS as the proxy says, as in Django
    assert call(app, url, headers={"X-Forwarded-Proto": "https"})[0] == 200
    assert call(app, url, headers={"X-Forwarded-Proto": "http"}, scheme="https")[0] == 418


def test_behind_nginx_the_bytes_are_handed_over(app, alice, chapter, settings):
    settings.SERVE_ACCEL_REDIRECT = "/protected/"
    page = chapter.pages.get(index=0)
    status, headers, body = call(app, signed_url(alice, chapter))
    assert status == 200 and body == b"" and headers["x-accel-redirect"] == f"/protected/{page.image.name}"
    assert headers["cache-control"] == "private, max-age=86400" and "accept-ranges" not in headers


def test_the_url_is_stable_within_a_window_for_the_browser_cache(alice, chapter, monkeypatch, settings):
    start = expiry(1_700_000_000, settings.SERVE_SIGNED_URL_TTL) - settings.SERVE_SIGNED_URL_TTL
    monkeypatch.setattr("catalog.serving.signed_urls.time.time", lambda: start - 1)
    first = signed_url(alice, chapter)
    monkeypatch.setattr("catalog.serving.signed_urls.time.time", lambda: start - 600)
    assert signed_url(alice, chapter) == first


def test_under_another_server_django_answers_the_same_url_the_same_way(app, alice, chapter, settings):
    """WSGI, the live test server: the view (mangalord/signed_views.py) answers from the same functions."""
    url = signed_url(alice, chapter)
    through_django = Client().get(url, HTTP_RANGE="bytes=0-9")
    status, lean, body = call(app, url, headers={"Range": "bytes=0-9"})
    assert through_django.status_code == status == 206 and through_django.content == body
    assert {k: lean.get(k) for k in SAME} == {k: through_django.headers.get(k) for k in SAME}
    assert Client().post(url).status_code == 405
    settings.SERVE_SIGNED_URLS = False
    assert Client().get(url).status_code == 404


def test_django_answers_a_large_file_whole_too(alice, db):
    src = f.source()
    chapter = f.chapter(f.manga(src=src), 1, src=src)
    page = f.page(chapter, 0, f.image_bytes(700, 700, fmt="PNG") + b"\0" * (600 * 1024))
    answer = Client().get(signed_url(alice, chapter))
    assert answer.status_code == 200 and b"".join(answer.streaming_content) == page.image.open("rb").read()
