"""Every door that changes how a source is crawled takes one path: the operator check, then one audit row.

The doors: the Django admin's change form and its policy actions, the Sources
page, the admin API (`PATCH .../sources/<id>/`) and the management commands.
A plain admin model permission (`catalog.change_source`) opens none of them.
"""

from __future__ import annotations

import inspect
import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from catalog.models import Source
from console.control import source_changes
from crawler import audit
from crawler.models import AuditEvent
from jobs.models import Job

pytestmark = pytest.mark.sqlite_ok  # on the embedded SQLite backend too (PostgreSQL is the default run)

API = "/api/v1/admin/crawler/sources/"
OTHER_SITE = "http://elsewhere.example/"


def _source(source_id: str, **settings: Any) -> Source:
    return Source.objects.create(
        id=source_id, name=source_id.title(), kind="demo", base_url="http://127.0.0.1:9/", settings=settings
    )


@pytest.fixture
def clerk(watcher):
    """Staff holding every admin model permission on sources, but not the operator permission."""
    codenames = ["view_source", "change_source", "add_source", "delete_source"]
    watcher.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalog", codename__in=codenames))
    return watcher


def _browser(user: Any) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(user)
    return client


def _admin_form(source: Source, **changes: Any) -> dict[str, Any]:
    fields = {"name": source.name, "kind": source.kind, "base_url": source.base_url, "enabled": "on"}
    fields["settings"] = json.dumps(changes.pop("settings", source.settings))
    return {**fields, **changes, "_save": "Save"}


def _unchanged(source: Source) -> bool:
    stored = Source.objects.get(id=source.id)
    return (stored.base_url, stored.settings, stored.enabled) == (source.base_url, source.settings, source.enabled)


@pytest.mark.django_db
def test_staff_holding_only_change_source_cannot_change_a_source_through_the_admin(clerk):
    shelf = _source("shelf", download="followed")
    admin = _browser(clerk)
    form = admin.get(f"/admin/catalog/source/{shelf.id}/change/")
    assert form.status_code == 200  # shown read-only: the view permission
    assert 'name="base_url"' not in form.content.decode() and 'name="settings"' not in form.content.decode()
    posted = admin.post(
        f"/admin/catalog/source/{shelf.id}/change/",
        _admin_form(shelf, base_url=OTHER_SITE, settings={"download": "all"}),
    )
    assert posted.status_code == 403
    assert admin.get("/admin/catalog/source/add/").status_code == 403
    added = admin.post("/admin/catalog/source/add/", {**_admin_form(shelf), "id": "mine", "base_url": OTHER_SITE})
    assert added.status_code == 403 and not Source.objects.filter(id="mine").exists()
    assert admin.post(f"/admin/catalog/source/{shelf.id}/delete/", {"post": "yes"}).status_code == 403
    listing = admin.get("/admin/catalog/source/").content.decode()
    assert 'value="download_all"' not in listing
    admin.post("/admin/catalog/source/", {"action": "download_all", "_selected_action": [shelf.id]})
    assert _unchanged(shelf)
    assert not AuditEvent.objects.exists()
    assert not Job.objects.filter(kind="enqueue_downloads").exists()
    with pytest.raises(source_changes.NotAnOperator, match="crawler.operate_crawler"):
        source_changes.change_source(actor=clerk, source_id="shelf", changes={"base_url": OTHER_SITE}, via="admin")
    assert _unchanged(shelf)


@pytest.mark.django_db
def test_an_operators_admin_change_goes_through_change_source_and_is_audited(operator):
    shelf = _source("shelf", download="followed")
    response = _browser(operator).post(
        f"/admin/catalog/source/{shelf.id}/change/",
        _admin_form(shelf, base_url=OTHER_SITE, settings={"download": "all"}),
    )
    assert response.status_code == 302
    row = AuditEvent.objects.get(action="change_source")
    assert (row.actor, row.target_id, row.detail["via"]) == (operator, "shelf", "admin")
    assert row.detail["changed"] == {
        "base_url": {"before": "http://127.0.0.1:9/", "after": OTHER_SITE},
        "settings": {"before": {"download": "followed"}, "after": {"download": "all"}},
    }
    assert row.detail["enqueue_job"] == str(Job.objects.get(kind="enqueue_downloads").id)


@pytest.mark.django_db
def test_the_admin_refuses_a_nul_in_settings_as_a_form_error(operator):
    shelf = _source("shelf")
    response = _browser(operator).post(
        f"/admin/catalog/source/{shelf.id}/change/", _admin_form(shelf, settings={"title": "a\x00b"})
    )
    assert response.status_code == 200 and "NUL character" in response.content.decode()
    assert _unchanged(shelf) and not AuditEvent.objects.exists()


@pytest.fixture
def audits_through_change_source(monkeypatch) -> list[str]:
    """The audit rows written, each with whether `source_changes.change_source` was on the stack when it was."""
    seen: list[str] = []
    real = audit.record

    def spy(actor: Any, action: str, *args: Any, **kwargs: Any) -> Any:
        callers = {(frame.function, frame.frame.f_globals.get("__name__")) for frame in inspect.stack()}
        via = ("change_source", "console.control.source_changes") in callers
        seen.append(f"{action} {'via change_source' if via else 'elsewhere'}")
        return real(actor, action, *args, **kwargs)

    monkeypatch.setattr(audit, "record", spy)
    return seen


def _door(door: str, operator: Any, source_id: str) -> None:
    """Switch `source_id` to download `all` through `door`, as an operator would."""
    browser = _browser(operator)
    if door == "admin":
        source = Source.objects.get(id=source_id)
        response = browser.post(
            f"/admin/catalog/source/{source_id}/change/", _admin_form(source, settings={"download": "all"})
        )
        assert response.status_code == 302, door
    elif door == "admin-action":
        response = browser.post("/admin/catalog/source/", {"action": "download_all", "_selected_action": [source_id]})
        assert response.status_code == 302, door
    elif door == "sources-page":
        response = browser.post(f"/admin/crawler/sources/{source_id}/settings/", {"settings": '{"download": "all"}'})
        assert response.status_code == 302, door
    elif door == "api":
        response = browser.patch(f"{API}{source_id}/", {"download": "all"}, content_type="application/json")
        assert response.status_code == 200, (door, response.content)
    else:
        call_command("download_policy", source_id, "all", stdout=StringIO())


@pytest.mark.django_db
def test_every_door_writes_the_same_audit_row_through_the_same_function(operator, audits_through_change_source):
    doors = source_changes.DOORS
    for door in doors:
        _source(door, download="followed")
        _door(door, operator, door)
    assert audits_through_change_source == ["change_source via change_source"] * len(doors)
    rows = {row.target_id: row for row in AuditEvent.objects.filter(action="change_source")}
    assert set(rows) == set(doors)
    for door, row in rows.items():
        assert row.scope == "source" and row.detail["via"] == door
        assert row.actor == (None if door == "cli" else operator)  # the CLI is the machine's operator
        assert set(row.detail) == {"via", "changed", "enqueue_job", "withdrawn"}
        assert row.detail["changed"] == {"settings": {"before": {"download": "followed"}, "after": {"download": "all"}}}
        assert Job.objects.filter(id=row.detail["enqueue_job"], kind="enqueue_downloads").exists()
        assert Source.objects.get(id=door).settings == {"download": "all"}


@pytest.mark.django_db
def test_adding_and_removing_a_source_in_the_admin_is_audited_for_operators(operator):
    browser = _browser(operator)
    template = Source(id="new", name="New", kind="demo", base_url=OTHER_SITE, settings={})
    response = browser.post("/admin/catalog/source/add/", {**_admin_form(template), "id": "new"})
    assert response.status_code == 302 and Source.objects.filter(id="new").exists()
    browser.post("/admin/catalog/source/new/delete/", {"post": "yes"})
    assert not Source.objects.filter(id="new").exists()
    actions = list(AuditEvent.objects.order_by("created_at").values_list("action", "detail__via"))
    assert actions == [("add_source", "admin"), ("remove_source", "admin")]


@pytest.mark.django_db
def test_the_source_api_changes_fields_and_refuses_bad_input_with_400_changing_nothing(operator, clerk):
    shelf = _source("shelf", download="followed")
    ops = _browser(operator)
    assert ops.get(f"{API}shelf/").json()["download"] == "followed"
    assert ops.get(f"{API}nope/").status_code == 404
    bad = [
        {},
        {"base_url": "not a url"},
        {"settings": {"download": "sometimes"}},
        {"settings": {"title": "a\x00b"}},
        {"settings": ["not", "an", "object"]},
        {"download": "sometimes"},
        {"name": "x\x00"},
        {"name": "x" * 201},
        {"enabled": "perhaps"},
    ]
    for body in bad:
        response = ops.patch(f"{API}shelf/", body, content_type="application/json")
        assert response.status_code == 400, (body, response.status_code)
    assert ops.patch(f"{API}nope/", {"enabled": False}, content_type="application/json").status_code == 404
    assert _unchanged(shelf) and not AuditEvent.objects.exists()

    refused = _browser(clerk).patch(f"{API}shelf/", {"base_url": OTHER_SITE}, content_type="application/json")
    assert refused.status_code == 403 and _unchanged(shelf)

    done = ops.patch(f"{API}shelf/", {"base_url": OTHER_SITE, "enabled": False}, content_type="application/json")
    assert done.status_code == 200 and sorted(done.json()["changed"]) == ["base_url", "enabled"]
    assert ops.patch(f"{API}shelf/", {"enabled": False}, content_type="application/json").json()["changed"] == []
    assert AuditEvent.objects.filter(action="change_source").count() == 1  # a change that changes nothing: no row


@pytest.mark.django_db
def test_management_commands_change_sources_as_the_machines_operator(operator):
    _source("shelf")
    call_command("download_policy", "shelf", "followed", stdout=StringIO())
    row = AuditEvent.objects.get(action="change_source")
    assert (row.actor, row.detail["via"]) == (None, "cli")


def test_require_operator_lets_the_machine_and_operators_through_only(db, operator, watcher, alice):
    source_changes.require_operator(None, "x")
    source_changes.require_operator(operator, "x")
    for user in (watcher, alice):
        with pytest.raises(source_changes.NotAnOperator, match="x needs the crawler.operate_crawler permission"):
            source_changes.require_operator(user, "x")
