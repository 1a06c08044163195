"""Who reaches what: anonymous, wrong password, an active user, an inactive user — for every reader URL."""

from __future__ import annotations

import pytest
from django.test import Client

from catalog.models import Tag
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

OPDS = [
    "/opds/",
    "/opds/latest/",
    "/opds/all/",
    "/opds/bookmarks/",
    "/opds/tags/",
    "/opds/tags/{tag}/",
    "/opds/search/?q=Ber",
    "/opds/opensearch.xml",
    "/opds/mangas/{manga}/",
    "/opds/mangas/{manga}/thumbnail/",
    "/opds/chapters/{chapter}/cbz/",
    "/opds/chapters/{chapter}/pages/0/",
]
API = ["/api/v1/progress/", "/api/v1/progress/{chapter}/"]
WEB = ["/", "/mangas/{manga}/", "/read/{chapter}/", "/read/pages/{page}/image/?w=100"]


@pytest.fixture
def ids(db):
    src = f.source("demo")
    m = f.manga("Berserk", src=src, cover=True, tags=("dark",))
    ch = f.chapter(m, 1, src=src, pages=2)
    return {"manga": m.id, "chapter": ch.id, "page": ch.pages.first().id, "tag": Tag.objects.get().id}


def _challenged(response) -> bool:
    return response.status_code == 401 and response["WWW-Authenticate"].startswith('Basic realm="Mangalord"')


@pytest.mark.parametrize("url", OPDS)
def test_opds_and_cbz_need_an_active_user_by_basic_or_session(client, alice, inactive, ids, url):
    url = url.format(**ids)
    assert _challenged(client.get(url))
    assert _challenged(client.get(url, **basic("alice", "wrong-password")))
    assert _challenged(client.get(url, HTTP_AUTHORIZATION="Basic !!notbase64"))
    assert _challenged(client.get(url, **basic("ian", "ian-password")))
    assert client.get(url, **basic("alice", PASSWORD)).status_code == 200
    session = Client()
    session.force_login(alice)
    assert session.get(url).status_code == 200
    gone = Client()
    gone.force_login(inactive)
    assert _challenged(gone.get(url))


@pytest.mark.parametrize("url", API)
def test_progress_api_needs_an_active_user(client, alice, inactive, ids, url):
    url = url.format(**ids)
    assert client.get(url).status_code == 401
    assert client.get(url, **basic("alice", "wrong-password")).status_code == 401
    assert client.get(url, HTTP_AUTHORIZATION="Token not-a-token").status_code == 401
    gone = Client()
    gone.force_login(inactive)
    assert gone.get(url).status_code == 401
    session = Client()
    session.force_login(alice)
    assert session.get(url).status_code == 200


@pytest.mark.parametrize("url", WEB)
def test_web_reader_sends_strangers_to_the_login_page(client, alice, inactive, ids, url):
    url = url.format(**ids)
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/?next=")
    wrong = client.post("/login/", {"username": "alice", "password": "wrong-password"})
    assert wrong.status_code == 200 and b"did not match" in wrong.content
    assert client.get(url).status_code == 302
    refused = Client().post("/login/", {"username": "ian", "password": "ian-password"})
    assert refused.status_code == 200 and b"did not match" in refused.content
    gone = Client()
    gone.force_login(inactive)
    assert gone.get(url).status_code == 302
    user = Client()
    assert user.post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 302
    assert user.get(url).status_code == 200


def test_bookmark_toggle_needs_login_and_csrf(alice, ids):
    browser = Client(enforce_csrf_checks=True)
    assert browser.post(f"/mangas/{ids['manga']}/bookmark/").status_code == 403  # CSRF first
    anonymous = Client()
    assert anonymous.post(f"/mangas/{ids['manga']}/bookmark/")["Location"].startswith("/login/")
    user = Client()
    user.force_login(alice)
    assert user.post(f"/mangas/{ids['manga']}/bookmark/").status_code == 302
    assert alice.bookmarks.filter(manga_id=ids["manga"], chapter__isnull=True).exists()
    user.post(f"/mangas/{ids['manga']}/bookmark/")
    assert not alice.bookmarks.exists()


def test_a_remembered_basic_password_stops_working_once_it_is_changed(client, alice, ids, django_user_model):
    auth = basic("alice", PASSWORD)
    assert client.get("/opds/", **auth).status_code == 200
    assert client.get("/opds/", **auth).status_code == 200  # remembered: no second password hash
    alice.set_password("a-new-password")
    alice.save(update_fields=["password"])
    assert _challenged(client.get("/opds/", **auth))
    assert client.get("/opds/", **basic("alice", "a-new-password")).status_code == 200
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert _challenged(client.get("/opds/", **basic("alice", "a-new-password")))


def test_the_second_basic_request_skips_the_password_hash(client, alice, db, monkeypatch):
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    calls = []
    original = PBKDF2PasswordHasher.verify
    monkeypatch.setattr(PBKDF2PasswordHasher, "verify", lambda self, *a: calls.append(1) or original(self, *a))
    client.get("/opds/", **basic("alice", PASSWORD))
    client.get("/opds/", **basic("alice", PASSWORD))
    assert len(calls) == 1
    client.get("/opds/", **basic("alice", "wrong"))
    client.get("/opds/", **basic("alice", "wrong"))
    assert len(calls) == 3  # a wrong password is never remembered
