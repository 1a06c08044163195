"""Who may do what: five personas x every crawler control, every staff read, the dashboard, the Sources page,
the admin actions and the library's reader routes, and a sixth (public) on the reader apps' routes (Komga API, kosync, API keys).

| persona   | who                                        |
|-----------|--------------------------------------------|
| anonymous | no credentials                             |
| user      | an active account (alice)                  |
| watcher   | staff without `crawler.operate_crawler`    |
| operator  | staff in the "Operators" group             |
| superuser | staff with every permission                |
| public    | no credentials, LIBRARY_PUBLIC_READ=true   |
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.test import APIClient

from analysis.models import PageAnalysis
from crawler.models import AuditEvent, SourceThrottle
from jobs.models import Job, JobState
from testsupport import api_factories as f

PERSONAS = ["anonymous", "user", "watcher", "operator", "superuser"]
BASE = "/api/v1/admin/crawler/"


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """Five personas a test: a cheap hasher keeps their creation from dominating the run."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def people(alice, watcher, operator, staff) -> dict[str, Any]:
    return {"anonymous": None, "user": alice, "watcher": watcher, "operator": operator, "superuser": staff}


def browser(user: Any) -> APIClient:
    """A real session login, so the Django views (dashboard, admin, web reader) see the user as well as DRF."""
    client = APIClient()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def world(db) -> dict[str, Any]:
    src = f.source("demo")
    m = f.manga("Dead Man's Manga", src=src, cover="covers/x.png")
    ch = f.chapter(m, 1, src=src, sync_state="done")
    pg = f.page(ch)
    return {"source": src, "manga": m, "chapter": ch, "page": pg, "dead": f.dead_content_job(ch)}


# (route, body) of every control; each answers 2xx to an operator.
CONTROLS = {
    "run/": {},
    "reconcile/": {"source": "demo"},
    "restart-browser/": None,
    "session/": {"phpsessid": "abc123-DEF,456"},
    "requeue/": "dead-job",
    "force-analyze/": "page",
}
CONTROL_EXPECTED = {"anonymous": 401, "user": 403, "watcher": 403, "operator": "2xx", "superuser": "2xx"}
STAFF_READS = ["", "dead-jobs/", "history/", "backlog/", "series-sources/"]
STAFF_READ_EXPECTED = {"anonymous": 401, "user": 403, "watcher": 200, "operator": 200, "superuser": 200}


def _body(route: str, world: dict[str, Any]) -> Any:
    body = CONTROLS[route]
    if body == "dead-job":
        return {"scope": "job", "target": str(world["dead"].id)}
    if body == "page":
        return {"page": str(world["page"].id)}
    return body


def _matches(status: int, expected: int | str) -> bool:
    return 200 <= status < 300 if expected == "2xx" else status == expected


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("persona", PERSONAS)
def test_every_control_needs_the_operate_permission(people, world, persona):
    client = browser(people[persona])
    audits = AuditEvent.objects.count()
    answers = {route: f.post_json(client, BASE + route, _body(route, world)) for route in CONTROLS}
    for route, response in answers.items():
        assert _matches(response.status_code, CONTROL_EXPECTED[persona]), (route, response.status_code)
        assert response.headers["Cache-Control"] == "no-store"
    if CONTROL_EXPECTED[persona] != "2xx":  # a refused control changed nothing
        assert AuditEvent.objects.count() == audits
        assert Job.objects.get(id=world["dead"].id).state == JobState.DEAD
        assert not Job.objects.filter(kind__in=["metadata_pass", "reconcile"]).exists()


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("persona", PERSONAS)
def test_staff_reads_are_open_to_every_staff_user(people, world, persona):
    client = browser(people[persona])
    for route in [*STAFF_READS, "stream/"]:
        if route == "stream/" and STAFF_READ_EXPECTED[persona] == 200:
            continue  # an open stream never ends; its refusals are what this table pins
        response = client.get(BASE + route)
        assert response.status_code == STAFF_READ_EXPECTED[persona], (route, response.status_code)


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("persona", PERSONAS)
def test_dashboard_shows_controls_to_operators_only(people, world, persona):
    response = browser(people[persona]).get("/admin/crawler/")
    if persona in ("anonymous", "user"):
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
        return
    page = response.content.decode()
    assert response.status_code == 200
    operates = persona in ("operator", "superuser")
    assert ('data-action="run"' in page) is operates
    assert ('id="cd-session-form"' in page) is operates
    assert ('data-can-operate="true"' in page) is operates
    assert ('id="cd-read-only"' in page) is not operates
    assert ('id="cd-sources-link"' in page) is operates
    index = browser(people[persona]).get("/admin/").content.decode()
    assert 'href="/admin/crawler/"' in index
    assert ('href="/admin/crawler/sources/"' in index) is operates


# The Sources page (add a site, crawl now, settings): operators only; the rest go to the login or get 403.
SOURCES_ROUTES = [
    ("get", "/admin/crawler/sources/", None),
    ("get", "/admin/crawler/sources/add/", None),
    ("post", "/admin/crawler/sources/add/", {"step": "detect", "url": ""}),
    ("post", "/admin/crawler/sources/demo/crawl/", {}),
    ("get", "/admin/crawler/sources/demo/settings/", None),
    ("post", "/admin/crawler/sources/demo/settings/", {"settings": '{"preset": "madara"}'}),
]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("persona", PERSONAS)
def test_the_sources_page_is_for_operators_only(people, world, persona):
    client = Client(HTTP_ORIGIN="http://testserver")
    if people[persona] is not None:
        client.force_login(people[persona])
    for method, route, body in SOURCES_ROUTES:
        response = getattr(client, method)(route, body)
        if persona in ("anonymous", "user"):
            assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), route
        elif persona == "watcher":
            assert response.status_code == 403, route
        elif body == {"step": "detect", "url": ""}:
            assert response.status_code == 400, route  # let in, and told the empty URL is what to fix
        else:
            assert response.status_code in (200, 302), (route, response.status_code)
            assert response.status_code == 200 or response["Location"] == "/admin/crawler/sources/", route
    operates = persona in ("operator", "superuser")
    assert Job.objects.filter(kind="metadata_pass").exists() is operates
    assert AuditEvent.objects.filter(action="change_source").exists() is operates


ADMIN_ACTIONS = [
    ("jobs/job", "requeue_dead", "dead"),
    ("jobs/job", "release", "running"),
    ("jobs/job", "force_analyze", "analyze"),
    ("crawler/sourcethrottle", "end_cooldown", "throttle"),
    ("catalog/manga", "requeue_chapters", "manga"),
    ("catalog/chapter", "requeue_chapters", "chapter"),
    ("analysis/pageanalysis", "force_analyze", "analysis"),
]


@pytest.fixture
def viewer(watcher):
    """A watcher who may also view the admin lists the actions live on (so only the action is missing)."""
    codenames = ["view_job", "view_sourcethrottle", "view_manga", "view_chapter", "view_pageanalysis"]
    watcher.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return watcher


def _targets(world: dict[str, Any]) -> dict[str, Any]:
    from django.utils import timezone

    running = f.job(
        f.SyncChapterContent(source_id="demo", chapter_id=world["chapter"].id, source_chapter_key="k"), "running"
    )
    return {
        "dead": world["dead"].id,
        "running": running.id,
        "analyze": f.dead_analyze_job(world["page"]).id,
        "throttle": SourceThrottle.objects.create(
            source_id="demo", tokens=1, refilled_at=timezone.now(), cooling_until=timezone.now().replace(year=2100)
        ).pk,
        "manga": world["manga"].id,
        "chapter": world["chapter"].id,
        "analysis": PageAnalysis.objects.create(page=world["page"]).pk,
    }


@pytest.mark.parametrize("persona", ["viewer", "operator", "superuser"])
def test_admin_actions_are_offered_and_run_for_operators_only(viewer, operator, staff, world, persona):
    user = {"viewer": viewer, "operator": operator, "superuser": staff}[persona]
    client = Client()
    client.force_login(user)
    targets = _targets(world)
    operates = persona != "viewer"
    for path, action, target in ADMIN_ACTIONS:
        listing = client.get(f"/admin/{path}/")
        assert listing.status_code == 200, path
        assert (f'value="{action}"' in listing.content.decode()) is operates, (path, action)
        audits = AuditEvent.objects.count()
        client.post(
            f"/admin/{path}/",
            {"action": action, "_selected_action": [str(targets[target])]},
            HTTP_ORIGIN="http://testserver",
        )
        assert (AuditEvent.objects.count() > audits) is operates, (path, action)


# Library reads: every signed-in persona reads, anonymous is asked to log in.
READER_ROUTES = [
    ("api", "/api/v1/mangas/"),
    ("api", "/api/v1/mangas/{manga}/"),
    ("api", "/api/v1/chapters/{chapter}/"),
    ("api", "/api/v1/pages/{page}/image/"),
    ("opds", "/opds/"),
    ("opds", "/opds/chapters/{chapter}/cbz/"),
    ("opds", "/opds/chapters/{chapter}/pages/0/"),
    ("web", "/"),
    ("web", "/mangas/{manga}/"),
    ("web", "/read/{chapter}/"),
    ("web", "/read/pages/{page}/image/?w=100"),
]
ANONYMOUS_ANSWER = {"api": 401, "opds": 401, "web": 302}


@pytest.mark.parametrize("persona", PERSONAS)
def test_library_reads_need_an_account(people, world, persona):
    client = browser(people[persona])
    ids = {k: world[k].id for k in ("manga", "chapter", "page")}
    for kind, route in READER_ROUTES:
        response = client.get(route.format(**ids))
        expected = ANONYMOUS_ANSWER[kind] if persona == "anonymous" else 200
        assert response.status_code == expected, (route, response.status_code)


# Reader apps: every Komga API route (with each persona's X-API-Key; other credentials:
# reader/tests/test_api_keys.py), kosync and a key in the catalog URL (by each persona's API key), the account
# page. "public" is anonymous with LIBRARY_PUBLIC_READ on.
KOMGA_READS = [
    "/api/v1/series",
    "/api/v1/series/{manga}",
    "/api/v1/series/{manga}/books",
    "/api/v1/series/{manga}/thumbnail",
    "/api/v1/books/{chapter}",
    "/api/v1/books/{chapter}/pages",
    "/api/v1/books/{chapter}/pages/1",
    "/api/v1/books/{chapter}/thumbnail",
    "/api/v1/libraries",
    "/api/v1/libraries/demo",
    "/api/v1/genres",
    "/api/v1/tags",
    "/api/v1/publishers",
    "/api/v1/authors",
    "/api/v1/collections",
    "/api/v1/readlists",
    "/api/v2/authors",
    "/api/v2/genres",
    "/api/v2/tags",
    "/api/v2/publishers",
]
# A user's own things: never anonymous, whatever LIBRARY_PUBLIC_READ says.
KOMGA_MINE = [
    ("get", "/api/v2/users/me", None),
    ("patch", "/api/v1/books/{chapter}/read-progress", {"page": 1}),
    ("delete", "/api/v1/books/{chapter}/read-progress", None),
    ("get", "/api/v2/series/{manga}/read-progress/tachiyomi", None),
    ("put", "/api/v2/series/{manga}/read-progress/tachiyomi", {"lastBookNumberSortRead": 1}),
]
DOCUMENT = "d" * 32


@pytest.fixture
def reader_world(world, people) -> dict[str, Any]:
    """The world, a KOReader document id for its chapter, and an API key for each persona with an account."""
    from django.apps import apps

    from accounts import api_keys

    apps.get_model("reader", "DocumentDigest").objects.create(
        digest=DOCUMENT, chapter=world["chapter"], method="binary"
    )
    world["manga"].cover.name = world["page"].image.name  # a stored image, for the series thumbnail
    world["manga"].save(update_fields=["cover"])
    keys = {name: api_keys.mint(user, "matrix")[1] for name, user in people.items() if user is not None}
    return {**world, "keys": keys}


def _kosync(people: dict[str, Any], persona: str, keys: dict[str, str]) -> dict[str, str]:
    from accounts import api_keys

    if people.get(persona) is None:
        return {}
    return {"HTTP_X_AUTH_USER": people[persona].username, "HTTP_X_AUTH_KEY": api_keys.kosync_key(keys[persona])}


@pytest.mark.parametrize("persona", [*PERSONAS, "public"])
def test_reader_apps_follow_the_library_policy(people, reader_world, settings, persona):
    settings.LIBRARY_PUBLIC_READ = persona == "public"
    user = people.get(persona)
    client = browser(user)
    ids = {k: reader_world[k].id for k in ("manga", "chapter")}
    key = reader_world["keys"].get(persona)
    komga = {"HTTP_X_API_KEY": key} if key else {}
    reads = 200 if user is not None or persona == "public" else 401
    for route in KOMGA_READS:
        response = APIClient().get(route.format(**ids), **komga)
        assert response.status_code == reads, (route, response.status_code)
        if reads == 401:  # Mihon sends credentials only after a Basic challenge
            assert response["WWW-Authenticate"].startswith("Basic "), route
    for method, route, body in KOMGA_MINE:
        response = getattr(APIClient(), method)(route.format(**ids), body, format="json", **komga)
        assert response.status_code == (401 if user is None else 204 if body or method == "delete" else 200), route

    sync = _kosync(people, persona, reader_world["keys"])
    mine = 401 if user is None else 200
    assert client.get("/kosync/users/auth", **sync).status_code == mine
    put = {"document": DOCUMENT, "progress": "1", "percentage": 1.0, "device": "K", "device_id": "K1"}
    assert client.put("/kosync/syncs/progress", put, format="json", **sync).status_code == mine
    assert client.get(f"/kosync/syncs/progress/{DOCUMENT}", **sync).status_code == mine
    registration = client.post("/kosync/users/create", {"username": "new", "password": "x"}, format="json")
    assert registration.status_code == 402  # refused to everyone unless KOSYNC_ALLOW_REGISTRATION

    assert client.get(f"/key/{key or 'mlk_no-such-key'}/opds/").status_code == (401 if user is None else 200)

    account = [client.get("/account/"), client.post("/account/", {"name": "phone"})]
    if user is None:
        assert all(r.status_code == 302 and r["Location"].startswith("/login/") for r in account)
        return
    assert [r.status_code for r in account] == [200, 200]
    own = user.api_keys.get(name="phone")
    revoked = client.post(f"/account/keys/{own.id}/revoke/")
    assert revoked.status_code == 302 and revoked["Location"] == "/account/"
    assert not user.api_keys.filter(pk=own.pk).exists()
