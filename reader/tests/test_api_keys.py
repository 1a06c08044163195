"""Per-user API keys: made, shown once, stored hashed, listed with last use, revoked; accepted on every reader way in.

Who reaches each Komga, kosync and account route: the permission matrix
(console/tests/api/test_permission_matrix.py); wrong keys and the lockout:
accounts/tests/test_api_key_lockout.py.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from django.test import Client
from lxml import etree

from accounts import api_keys
from accounts.api_keys import ApiKey
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

# One route of each kind (a list, a page image, a per-user call): every Komga route shares their authentication,
# and the permission matrix (console/tests/api/test_permission_matrix.py) asks every route with a key.
KOMGA = ["/api/v1/series", "/api/v1/books/{chapter}/pages/1", "/api/v2/users/me"]


@pytest.fixture
def ids(db):
    src = f.source("demo")
    m = f.manga("Berserk", src=src, cover=True, tags=("dark",))
    ch = f.chapter(m, 1, src=src, pages=2)
    return {"manga": m.id, "chapter": ch.id}


@pytest.fixture
def keys(db, alice, django_user_model):
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    return {"alice": api_keys.mint(alice, "Mihon")[1], "bob": api_keys.mint(bob, "Bob's phone")[1]}


def _challenged(response) -> bool:
    return response.status_code == 401 and response["WWW-Authenticate"].startswith("Basic ")


def test_the_komga_api_takes_a_password_a_key_or_a_session(client, alice, ids, keys):
    session = Client()
    session.force_login(alice)
    # Wrong credentials count toward the lockout (accounts/tests/test_api_key_lockout.py), so they are tried on
    # one route; every route shares its authentication.
    assert _challenged(client.get("/api/v1/series", **basic("alice", "wrong-password")))
    assert _challenged(client.get("/api/v1/series", **basic("alice", keys["bob"])))  # another user's key
    assert _challenged(client.get("/api/v1/series", HTTP_X_API_KEY="mlk_not-a-key"))
    for url in (u.format(**ids) for u in KOMGA):
        assert _challenged(client.get(url)), url
        assert client.get(url, **basic("alice", PASSWORD)).status_code == 200, url
        assert client.get(url, **basic("alice", keys["alice"])).status_code == 200, url
        assert client.get(url, HTTP_X_API_KEY=keys["alice"]).status_code == 200, url
        assert session.get(url).status_code == 200, url


def test_progress_writes_need_a_reader_and_a_browser_session_needs_csrf(client, alice, ids, keys):
    chapter, manga = ids["chapter"], ids["manga"]
    writes = [
        ("patch", f"/api/v1/books/{chapter}/read-progress", {"page": 1}),
        ("delete", f"/api/v1/books/{chapter}/read-progress", None),
        ("put", f"/api/v2/series/{manga}/read-progress/tachiyomi", {"lastBookNumberSortRead": 1}),
    ]
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    for method, url, body in writes:
        kwargs = {"data": body, "content_type": "application/json"} if body else {}
        assert _challenged(getattr(client, method)(url, **kwargs))
        assert _challenged(getattr(client, method)(url, **kwargs, **basic("alice", keys["bob"])))
        assert getattr(browser, method)(url, **kwargs).status_code == 403  # session without CSRF token
        assert getattr(client, method)(url, **kwargs, HTTP_X_API_KEY=keys["alice"]).status_code == 204


def test_account_page_makes_a_key_shows_it_once_lists_it_and_revokes_it(alice, db):
    browser = Client()
    assert browser.get("/account/")["Location"].startswith("/login/")
    browser.force_login(alice)
    made = browser.post("/account/", {"name": "  Mihon   on my phone "})
    assert made.status_code == 200 and made["Cache-Control"] == "no-store"
    raw = re.search(rb'id="new-key">(mlk_[A-Za-z0-9_-]+)<', made.content).group(1).decode()
    key = ApiKey.objects.get(user=alice)
    assert key.name == "Mihon on my phone"
    assert raw not in str(ApiKey.objects.filter(pk=key.pk).values().get())  # only digests are stored
    assert key.digest == hashlib.sha256(raw.encode()).hexdigest()
    listed = browser.get("/account/").content
    assert raw.encode() not in listed and b"Mihon on my phone" in listed and b"never" in listed

    assert Client().get("/opds/", **basic("alice", raw)).status_code == 200
    key.refresh_from_db()
    assert key.last_used_at is not None
    assert key.last_used_at.strftime("%Y-%m-%d %H:%M").encode() in browser.get("/account/").content

    assert Client().post(f"/account/keys/{key.id}/revoke/")["Location"].startswith("/login/")
    assert browser.post("/account/", {"name": "   "}).status_code == 400
    assert ApiKey.objects.count() == 1
    assert browser.post(f"/account/keys/{key.id}/revoke/").status_code == 302
    assert not ApiKey.objects.exists()
    assert _challenged(Client().get("/opds/", **basic("alice", raw)))


def test_nobody_revokes_someone_elses_key(alice, keys):
    bobs = ApiKey.objects.get(user__username="bob")
    browser = Client()
    browser.force_login(alice)
    browser.post(f"/account/keys/{bobs.id}/revoke/")
    assert ApiKey.objects.filter(pk=bobs.pk).exists()
    assert Client().get("/opds/", **basic("bob", keys["bob"])).status_code == 200


def test_a_deactivated_users_keys_stop_working(alice, keys, ids):
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert _challenged(Client().get("/api/v1/series", HTTP_X_API_KEY=keys["alice"]))
    assert _challenged(Client().get("/opds/", **basic("alice", keys["alice"])))


def test_the_rest_api_takes_a_key(client, keys, ids):
    assert client.get("/api/v1/progress/").status_code == 401
    assert client.get("/api/v1/progress/", HTTP_X_API_KEY=keys["alice"]).status_code == 200
    assert client.get(f"/api/v1/mangas/{ids['manga']}/cover/", HTTP_X_API_KEY=keys["alice"]).status_code == 200
    progress = client.put(
        f"/api/v1/progress/{ids['chapter']}/",
        {"last_page": 1},
        content_type="application/json",
        HTTP_X_API_KEY=keys["alice"],
    )
    assert progress.status_code == 200 and progress.json()["last_page"] == 1


def test_a_key_in_the_catalog_url_opens_opds_and_every_link_keeps_it(client, keys, ids):
    root = f"/key/{keys['alice']}/opds/"
    feed = client.get(root)
    assert feed.status_code == 200
    hrefs = etree.fromstring(feed.content).xpath("//*[local-name()='link']/@href")
    assert hrefs and all(f"/key/{keys['alice']}/" in h for h in hrefs)
    manga = client.get(f"/key/{keys['alice']}/opds/mangas/{ids['manga']}/")
    links = etree.fromstring(manga.content).xpath("//*[local-name()='link']/@href")
    for href in links:
        if "/cbz/" in href or "/cover/" in href or "/thumbnail/" in href:
            assert client.get(href.replace("http://testserver", "")).status_code == 200, href
    assert client.get(f"/key/{keys['alice']}/opds/").status_code == 200  # the script prefix did not leak
    assert client.get("/opds/").status_code == 401
    assert client.get("/key/mlk_revoked-or-never-made/opds/").status_code == 401
    assert client.get(f"/key/{keys['alice']}/admin/").status_code == 404
    assert client.get(f"/key/{keys['alice']}/account/").status_code == 404
    assert client.post(f"/key/{keys['alice']}/opds/").status_code == 405


def test_the_admin_makes_a_key_and_shows_it_once(alice, staff):
    admin = Client()
    admin.force_login(staff)
    response = admin.post("/admin/accounts/apikey/add/", {"user": alice.pk, "name": "Panels"}, follow=True)
    assert response.status_code == 200
    raw = re.search(rb"(mlk_[A-Za-z0-9_-]{20,})", response.content).group(1).decode()
    assert Client().get("/opds/", **basic("alice", raw)).status_code == 200
    listing = admin.get("/admin/accounts/apikey/").content
    assert b"Panels" in listing and raw.encode() not in listing
