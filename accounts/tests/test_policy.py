"""The access policy: the library opened on purpose (LIBRARY_PUBLIC_READ), and a new credential scheme plugging in."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import credentials
from catalog.models import Source
from testsupport import api_factories as f

ADDRESS_LIMIT = 3


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def ids(db):
    src: Source = f.source("demo")
    m = f.manga("Open Book", src=src)
    ch = f.chapter(m, 1, src=src, sync_state="done")
    return {"manga": m.id, "chapter": ch.id, "page": f.page(ch).id}


PUBLIC_READS = [
    "/api/v1/mangas/",
    "/api/v1/mangas/{manga}/",
    "/api/v1/chapters/{chapter}/",
    "/api/v1/pages/{page}/image/",
    "/opds/",
    "/opds/mangas/{manga}/",
    "/opds/chapters/{chapter}/cbz/",
    "/opds/chapters/{chapter}/pages/0/",
    "/",
    "/mangas/{manga}/",
    "/read/{chapter}/",
]


@pytest.mark.django_db
def test_a_public_library_is_read_by_anyone_but_per_user_things_still_need_a_login(settings, ids, alice):
    settings.LIBRARY_PUBLIC_READ = True
    anonymous = Client()
    for route in PUBLIC_READS:
        assert anonymous.get(route.format(**ids)).status_code == 200, route
    assert anonymous.get("/opds/bookmarks/").status_code == 401
    assert anonymous.get("/api/v1/bookmarks/").status_code == 401
    assert anonymous.get("/api/v1/progress/").status_code == 401
    assert anonymous.post(f"/mangas/{ids['manga']}/bookmark/")["Location"].startswith("/login/")
    assert anonymous.post("/api/v1/mangas/", {}, content_type="application/json").status_code in (401, 405)
    # Credentials still count: a user who sends them reads as themselves.
    reader = Client()
    reader.force_login(alice)
    assert reader.get("/opds/bookmarks/").status_code == 200


@pytest.mark.django_db
def test_the_library_is_closed_by_default(ids):
    anonymous = Client()
    for route in PUBLIC_READS:
        assert anonymous.get(route.format(**ids)).status_code in (302, 401), route


@pytest.fixture
def api_key_scheme(alice):
    """A device key in a header of its own, as a later protocol would register it (one key, alice's)."""
    keys = {"k-alice": alice}
    scheme = credentials.HeaderScheme(
        "DeviceKey",
        credentials.header("X-Device-Key"),
        lambda request, key: credentials.verify_key(request, key, scheme="api-key", owner=keys.get),
    )
    credentials.register_scheme(scheme)
    yield
    credentials._schemes.remove(scheme)


@pytest.mark.django_db
def test_a_registered_scheme_reads_everywhere_and_gets_the_lockout(settings, ids, api_key_scheme):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = ADDRESS_LIMIT
    settings.AXES_FAILURE_LIMIT = ADDRESS_LIMIT
    client = Client()
    for route in ("/api/v1/mangas/", "/opds/"):
        assert client.get(route, HTTP_X_DEVICE_KEY="k-alice").status_code == 200
    for n in range(ADDRESS_LIMIT - 1):
        assert client.get("/opds/", HTTP_X_DEVICE_KEY=f"guess-{n}").status_code == 401
    assert client.get("/api/v1/mangas/", HTTP_X_DEVICE_KEY="guess-last").status_code == 429
    assert client.get("/opds/", HTTP_X_DEVICE_KEY="k-alice").status_code == 429  # the right key too, while locked
    assert Client(REMOTE_ADDR="127.0.0.2").get("/opds/", HTTP_X_DEVICE_KEY="k-alice").status_code == 200
