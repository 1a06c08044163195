"""The OpenAPI schema of the whole API generates without warnings, and a property-based run finds no 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.management import call_command
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token

from analysis.payloads import AnalyzePage
from catalog.models import Chapter
from testsupport import api_factories as f


@pytest.mark.sqlite_ok
def test_schema_generates_and_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    # --fail-on-warn turns any drf-spectacular warning (an untyped field, an unannotated view) into an error.
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(out))
    text = out.read_text()
    for path in ("/api/v1/mangas/", "/api/v1/bookmarks/", "/api/v1/admin/crawler/requeue/", "/api/v1/auth/token/"):
        assert f"{path}:" in text


@pytest.mark.sqlite_ok
def test_schema_and_docs_are_served(anon_client, db):
    assert anon_client.get("/api/schema/").status_code == 200
    assert anon_client.get("/api/docs/").status_code == 200


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("page", "bundle"), [("/api/docs/", "swagger-ui-bundle.js"), ("/api/redoc/", "redoc.standalone.js")]
)
def test_api_docs_load_only_our_own_static_files(anon_client, db, page, bundle):
    """Swagger UI and ReDoc come from drf-spectacular-sidecar's static files: no CDN, so they work offline."""
    import re

    from django.contrib.staticfiles import finders

    html = anon_client.get(page).content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', html)
    assert any(a.endswith(bundle) for a in assets), assets
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), asset


@pytest.fixture
def api_schema(db):
    """The schema served by the real WSGI application, which the generated calls then go through.

    Like Django's test client, keep the per-request connection reset away:
    it would close the connection that holds the test's transaction.
    """
    from mangalord.wsgi import application

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    # The SSE stream never ends; it is exercised by the live-status tests.
    yield schemathesis.openapi.from_wsgi("/api/schema/", application).exclude(path_regex="stream")
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def staff_token(staff) -> str:
    return Token.objects.create(user=staff).key


@pytest.fixture
def populated(db):
    """Real rows (and a dead job of each labelled kind) so generated calls reach more than 404s."""
    src = f.source("demo")
    m = f.manga("Berserk", src=src, tags=("dark",))
    ch = f.chapter(m, 1, src=src)
    f.chapter(m, 2, src=src, sync_state=Chapter.SyncState.DONE)
    pg = f.page(ch)
    f.dead_content_job(ch)
    f.dead_sync_manga("Vagabond")
    f.job(AnalyzePage(page_id=pg.id), "dead")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_generated_request_gets_a_server_error(case, staff_token, populated):
    response = case.call(headers={"Authorization": f"Token {staff_token}"})
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}"
