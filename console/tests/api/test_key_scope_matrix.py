"""A key made for a reading app opens no admin or operator route, whoever owns it.

The routes are read from the URL conf, so a route added later is in the
matrix without editing it:

- the admin crawler API (`/api/v1/admin/...`, header credentials): a `read`
  key is refused (401/403), an `operate` key of an operator passes the
  permission (any answer but 401/403), an `operate` key whose owner left the
  Operators group is refused (403), a revoked key is 401;
- the Django admin, the dashboard and the Sources page (`/admin/...`): a
  browser session only, so every key, `operate` included, is refused (the
  admin's login redirect, or 401/403/404/405) and nothing changes.

Each key is sent as the Basic password, as `X-API-Key`, and in the URL
(`/key/<key>/...`, which opens the OPDS catalog only: 404 for the rest).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from accounts import api_keys
from crawler.models import AuditEvent
from jobs.models import Job
from testsupport import api_factories as f

pytestmark = pytest.mark.sqlite_ok  # on the embedded SQLite backend too (PostgreSQL is the default run)

API_PREFIX = "api/v1/admin/"
SESSION_ONLY_PREFIX = "admin/"
REFUSED = (401, 403)
# The admin's own sign-in and sign-out pages answer anyone: they are where a refused request is sent.
OPEN_ADMIN_PAGES = ("admin/login/", "admin/logout/")
# Stand-ins for the path parameters of the routes (a source id, an object id, an admin app).
SAMPLE = {"slug": "demo", "str": "demo", "int": "1", "path": "1", "uuid": "00000000-0000-0000-0000-000000000001"}


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def concrete(route: str) -> str:
    """A URL path a route matches: `<slug:x>` → `demo`, a regex alternation → its first word, `.*` → `nothing`."""
    path = re.sub(r"\(\?P<\w+>([\w|]+)\)", lambda m: m.group(1).split("|")[0], route)
    path = re.sub(r"\(\?P<\w+>\.\*\)", "nothing", path)
    path = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m.group(1) or "str"], path)
    return "/" + path.replace("^", "").replace("$", "")


def methods_of(pattern: URLPattern) -> list[str]:
    """The methods a view answers: a DRF view's handlers, else GET and POST (a plain Django view)."""
    view = getattr(pattern.callback, "cls", None)
    if view is None:
        return ["get", "post"]
    return [m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)]


def operator_routes() -> dict[str, list[tuple[str, str]]]:
    """{'api': [(method, path)...], 'session': [...]}: every admin and operator route of the URL conf."""
    found: dict[str, list[tuple[str, str]]] = {"api": [], "session": []}
    for route, pattern in _walk(get_resolver().url_patterns):
        if route.startswith(API_PREFIX):
            kind = "api"
        elif route.startswith(SESSION_ONLY_PREFIX) and route not in OPEN_ADMIN_PAGES:
            kind = "session"
        else:
            continue
        found[kind].extend((method, concrete(route)) for method in methods_of(pattern))
    return found


def test_the_route_table_covers_every_control_and_page():
    routes = operator_routes()
    api = {path for _, path in routes["api"]}
    for control in ("run/", "reconcile/", "session/", "requeue/", "disk-floor/", "force-analyze/", "sources/demo/"):
        assert f"/api/v1/admin/crawler/{control}" in api, control
    session = {path for _, path in routes["session"]}
    assert {"/admin/crawler/sources/demo/settings/", "/admin/catalog/source/1/change/", "/admin/"} <= session
    assert concrete("admin/^(?P<app_label>auth|axes)/$") == "/admin/auth/"
    assert concrete("admin/(?P<url>.*)$") == "/admin/nothing"


def _basic(user: Any, key: str) -> dict[str, Any]:
    token = base64.b64encode(f"{user.get_username()}:{key}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def send(way: str, method: str, path: str, user: Any, key: str) -> Any:
    """One request carrying `key` the `way` given; mutations come from the site's own origin (not a CSRF case)."""
    client = Client(HTTP_ORIGIN="http://testserver")
    if way == "path":
        path = f"/key/{key}{path}"
        extra: dict[str, Any] = {}
    elif way == "basic":
        extra = _basic(user, key)
    else:
        extra = {"HTTP_X_API_KEY": key}
    if path.endswith("/stream/") and method == "get":
        method = "head"  # past the checks the stream answers HEAD with 405; GET would stream forever
    if method in ("get", "head"):
        return getattr(client, method)(path, **extra)
    return getattr(client, method)(path, "{}", content_type="application/json", **extra)


WAYS = ("basic", "x-api-key", "path")


@pytest.fixture
def world(db, settings):
    # Wrong keys count toward the lockout; this table sends hundreds on purpose, from one address.
    settings.AXES_FAILURE_LIMIT = settings.LOGIN_ADDRESS_FAILURE_LIMIT = 100_000
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    src = f.source("demo")
    f.chapter(f.manga("Scoped", src=src), 1, src=src)
    return src


@pytest.fixture
def keys(world, operator, django_user_model):
    former = django_user_model.objects.create_user("fred", "fred@example.com", "fred-password", is_staff=True)
    former.groups.add(Group.objects.get(name="Operators"))
    revoked_key, revoked = api_keys.mint(operator, "gone")
    made = {
        "read": (operator, api_keys.mint(operator, "Mihon")[1]),
        "operate": (operator, api_keys.mint(operator, "script", api_keys.OPERATE)[1]),
        "former": (former, api_keys.mint(former, "old script", api_keys.OPERATE)[1]),
        "revoked": (operator, revoked),
    }
    former.groups.clear()  # left the Operators group after the key was made
    revoked_key.delete()
    return made


def _changed_nothing(audits: int, jobs: int) -> bool:
    return AuditEvent.objects.count() == audits and Job.objects.count() == jobs


def test_a_key_reaches_an_admin_api_route_only_when_scoped_operate_and_held_by_an_operator(keys):
    routes = operator_routes()["api"]
    assert len(routes) >= 12
    expected = {"read": REFUSED, "former": (403,), "revoked": (401,)}
    answered: dict[str, int] = {}
    for method, path in routes:
        for way in WAYS:
            for state, (user, key) in keys.items():
                audits, jobs = AuditEvent.objects.count(), Job.objects.count()
                status = send(way, method, path, user, key).status_code
                answered[f"{state} {way} {method} {path}"] = status
                if way == "path":  # a key in the URL opens the OPDS catalog only, whatever its scope
                    assert status == 404, (state, method, path, status)
                elif state == "operate":
                    assert status not in (*REFUSED, 404), (way, method, path, status)
                else:
                    assert status in expected[state], (state, way, method, path, status)
                    assert _changed_nothing(audits, jobs), (state, way, method, path)
    allowed = [request for request, status in answered.items() if status not in (*REFUSED, 404)]
    assert len(allowed) == len(routes) * 2  # the operate key's, by Basic and by X-API-Key; every other refused


def test_no_key_opens_the_django_admin_the_dashboard_or_the_sources_page(keys):
    routes = operator_routes()["session"]
    assert len(routes) >= 130
    audits, jobs = AuditEvent.objects.count(), Job.objects.count()
    for method, path in routes:
        for way in WAYS:
            for state in ("read", "operate"):
                user, key = keys[state]
                response = send(way, method, path, user, key)
                login = response.status_code == 302 and response["Location"].startswith("/admin/login/")
                assert login or response.status_code in (401, 403, 404, 405), (state, way, method, path)
    assert _changed_nothing(audits, jobs)


def test_a_script_with_an_operate_key_in_x_api_key_needs_no_origin_header(keys):
    """Browsers never attach X-API-Key on their own, so like Authorization it is no CSRF vector."""
    operator, key = keys["operate"]
    response = Client().post("/api/v1/admin/crawler/run/", "{}", content_type="application/json", HTTP_X_API_KEY=key)
    assert response.status_code == 202
    _, read_key = keys["read"]
    refused = Client().post(
        "/api/v1/admin/crawler/run/", "{}", content_type="application/json", HTTP_X_API_KEY=read_key
    )
    assert refused.status_code == 403
