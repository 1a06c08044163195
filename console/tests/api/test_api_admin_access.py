"""Who may reach the admin crawler API, from where, and what every response carries.

Every route: anonymous -> 401 with a challenge and `Cache-Control: no-store`
(who else gets what is `test_permission_matrix`). Mutations from a
foreign origin are refused on top of Django's CSRF check.
"""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from crawler import state_store
from crawler.models import AuditEvent
from jobs.models import Job
from mangalord.security import is_origin_allowed
from testsupport import api_factories as f

BASE = "/api/v1/admin/crawler/"
SAME_ORIGIN = f.SAME_ORIGIN


@pytest.fixture
def world(db) -> dict[str, Any]:
    src = f.source("demo")
    m = f.manga("Dead Man's Manga", src=src)
    ch = f.chapter(m, 1, src=src)
    return {"source": src, "manga": m, "chapter": ch, "page": f.page(ch), "dead": f.dead_content_job(ch)}


def _body(route: str, world: dict[str, Any]) -> dict[str, Any] | None:
    return {
        "run/": {},
        "reconcile/": {"source": "demo"},
        "restart-browser/": None,
        "session/": {"phpsessid": "abc123-DEF,456"},
        "requeue/": {"scope": "job", "target": str(world["dead"].id)},
        "force-analyze/": {"page": str(world["page"].id)},
        "disk-floor/": {"floor": "0"},
    }.get(route)


# (method, route, status a staff call answers with)
ROUTES = [
    ("get", "", 200),
    ("get", "dead-jobs/", 200),
    ("get", "history/", 200),
    ("get", "backlog/", 200),
    ("post", "run/", 202),
    ("post", "reconcile/", 202),
    ("post", "restart-browser/", 202),
    ("post", "session/", 200),
    ("post", "requeue/", 200),
    ("post", "force-analyze/", 202),
    ("post", "disk-floor/", 200),
]
ROUTE_IDS = [f"{m.upper()} {r or '(status)'}" for m, r, _ in ROUTES]


def call(client: APIClient, method: str, route: str, body: Any = None, **headers: str):
    if method == "get":
        return client.get(BASE + route, **headers)
    return f.post_json(client, BASE + route, body, **headers)


def session_client(user) -> APIClient:
    """A real session login (not force_authenticate), so plain Django views see the user too."""
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(("method", "route", "_status"), ROUTES, ids=ROUTE_IDS)
def test_anonymous_gets_401_with_a_challenge_and_no_store(anon_client, world, method, route, _status):
    response = call(anon_client, method, route, _body(route, world))
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Token")
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(("client_name", "status"), [("anon", 401), ("alice", 403)])
def test_stream_route_is_staff_only(anon_client, alice, client_name, status):
    client = anon_client if client_name == "anon" else session_client(alice)
    response = client.get(BASE + "stream/")
    assert response.status_code == status
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.sqlite_ok
def test_dashboard_pages_carry_no_store(staff):
    response = session_client(staff).get("/admin/crawler/")
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.sqlite_ok
def test_guard_leaves_the_library_api_cacheable(alice_client, db):
    response = alice_client.get("/api/v1/mangas/")
    assert response.status_code == 200
    assert "no-store" not in response.headers.get("Cache-Control", "")


# --- origin checks ------------------------------------------------------------------


def _jobs_and_audit() -> tuple[int, int]:
    return Job.objects.count(), AuditEvent.objects.count()


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_ORIGIN": "https://evil.example"},
        {"HTTP_ORIGIN": "null"},
        {"HTTP_ORIGIN": "", "HTTP_REFERER": "https://evil.example/page"},
        {"HTTP_ORIGIN": "", "HTTP_REFERER": "http://testserver.evil.example/"},
        {"HTTP_ORIGIN": ""},  # a cookie-authenticated mutation with no provenance at all
    ],
    ids=["bad-origin", "null-origin", "bad-referer", "lookalike-referer", "no-origin-no-referer"],
)
def test_cross_origin_mutation_is_refused_and_changes_nothing(staff, world, headers):
    before = _jobs_and_audit()
    response = call(session_client(staff), "post", "run/", {}, **headers)
    assert response.status_code == 403
    assert "origin" in response.json()["detail"].lower()
    assert response.headers["Cache-Control"] == "no-store"
    assert _jobs_and_audit() == before


@pytest.mark.sqlite_ok
def test_same_origin_referer_stands_in_for_a_missing_origin(staff, world):
    response = call(session_client(staff), "post", "run/", {}, HTTP_ORIGIN="", HTTP_REFERER="http://testserver/admin/")
    assert response.status_code == 202


@pytest.mark.sqlite_ok
def test_configured_allowed_origin_is_accepted_and_others_refused(settings, staff, world):
    settings.ADMIN_ALLOWED_ORIGINS = ["https://ops.example.com"]
    client = session_client(staff)
    assert call(client, "post", "run/", {}, HTTP_ORIGIN="https://ops.example.com:443").status_code == 202
    # With a list configured, even the request's own host must be on it.
    assert call(client, "post", "reconcile/", {}, HTTP_ORIGIN=SAME_ORIGIN).status_code == 403
    assert (
        call(client, "post", "reconcile/", {}, HTTP_ORIGIN="", HTTP_REFERER="https://ops.example.com/x").status_code
        == 202
    )


@pytest.mark.sqlite_ok
def test_token_client_without_origin_is_accepted(staff, world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    response = client.post(BASE + "restart-browser/")
    assert response.status_code == 202
    assert state_store.browser_restart_generation() == 1


@pytest.mark.sqlite_ok
def test_django_csrf_still_applies_to_session_mutations(staff, world):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(staff)
    client.get("/admin/")  # sets the csrftoken cookie
    refused = client.post(BASE + "run/", {}, format="json", HTTP_ORIGIN=SAME_ORIGIN)
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    assert not Job.objects.filter(kind="metadata_pass").exists()
    token = client.cookies["csrftoken"].value
    accepted = client.post(BASE + "run/", {}, format="json", HTTP_ORIGIN=SAME_ORIGIN, HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 202


# --- the decision itself -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "referer", "host", "allowed", "authz", "expected"),
    [
        ("http://testserver", None, "testserver", [], False, True),
        ("http://TestServer", None, "testserver", [], False, True),
        ("https://testserver", None, "testserver", [], False, True),  # TLS ended at a proxy: host decides
        ("http://testserver:8000", None, "testserver", [], False, False),
        ("http://127.0.0.1:8000", None, "127.0.0.1:8000", [], False, True),
        ("http://[::1]:8000", None, "[::1]:8000", [], False, True),
        ("https://evil.example", None, "testserver", [], False, False),
        ("https://evil.example", "http://testserver/", "testserver", [], False, False),  # Origin wins
        (None, "http://testserver/admin/crawler/", "testserver", [], False, True),
        (None, "https://evil.example/", "testserver", [], False, False),
        ("null", None, "testserver", [], False, False),
        ("javascript:alert(1)", None, "testserver", [], False, False),
        (None, None, "testserver", [], False, False),
        (None, None, "testserver", [], True, True),
        ("https://ops.example.com", None, "testserver", ["https://ops.example.com/"], False, True),
        ("https://ops.example.com:443", None, "x", ["https://ops.example.com"], False, True),
        ("http://ops.example.com", None, "x", ["https://ops.example.com"], False, False),
        ("http://testserver", None, "testserver", ["https://ops.example.com"], False, False),
        ("https://evil.example", None, "testserver", ["https://ops.example.com"], True, False),
        ("http://testserver", None, None, [], False, False),  # host not in ALLOWED_HOSTS
    ],
)
def test_is_origin_allowed_truth_table(origin, referer, host, allowed, authz, expected):
    assert (
        is_origin_allowed(
            origin=origin, referer=referer, request_host=host, allowed_origins=allowed, has_authorization=authz
        )
        is expected
    )


@pytest.mark.sqlite_ok
def test_guard_also_holds_on_the_asgi_path(db):
    """Daphne serves the dashboard: the middleware's async branch refuses and marks no-store the same way."""
    client = AsyncClient()

    async def scenario() -> tuple:
        refused = await client.post(BASE + "run/", {}, content_type="application/json", origin="https://evil.example")
        anonymous = await client.get(BASE)
        return refused, anonymous

    refused, anonymous = async_to_sync(scenario)()
    assert refused.status_code == 403
    assert refused.headers["Cache-Control"] == "no-store"
    assert anonymous.status_code == 401
    assert anonymous.headers["Cache-Control"] == "no-store"
