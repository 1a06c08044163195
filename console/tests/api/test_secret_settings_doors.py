"""A source's secret settings never leave the server, through any door, and a round-trip edit keeps them.

The doors an operator sees settings through: the admin API with an
`operate`-scoped key, the Sources page's settings editor, the Django admin's
change form (and its read-only view for staff who do not operate), and the
audit rows each change writes. Each test asserts the stored secret is in no
response body and that sending the shown settings back, another key edited,
leaves the secret as it was.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from accounts import api_keys
from catalog.models import Source
from catalog.source_settings import MASK
from crawler.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

PASSWORD = "pa55-Wh1sper-7731"
TOKEN = "Bearer t0ken-5eCRet-991"
API = "/api/v1/admin/crawler/sources/"


def _source(source_id: str, kind: str, settings: dict[str, Any]) -> Source:
    return Source.objects.create(
        id=source_id, name=source_id.title(), kind=kind, base_url="http://127.0.0.1:9/", settings=settings
    )


@pytest.fixture
def harbor() -> Source:
    """A Suwayomi source logging in with a password."""
    credentials = {"suwayomi_auth": "basic", "suwayomi_username": "reader", "suwayomi_password": PASSWORD}
    return _source("harbor", Source.Kind.SUWAYOMI, {"suwayomi_source": "2499283573021220255", **credentials})


@pytest.fixture
def shelf() -> Source:
    """A source sending an Authorization header with every request."""
    return _source("shelf", Source.Kind.DEMO, {"headers": {"Authorization": TOKEN, "Accept-Language": "en"}})


def _browser(user: Any) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(user)
    return client


def _stored(source: Source) -> dict[str, Any]:
    return Source.objects.get(id=source.id).settings


def _audits() -> str:
    return json.dumps([row.detail for row in AuditEvent.objects.all()])


def test_the_api_answers_secrets_masked_to_an_operate_key_and_a_round_trip_keeps_them(operator, harbor):
    _, key = api_keys.mint(operator, "script", api_keys.OPERATE)
    api = Client(HTTP_X_API_KEY=key)
    shown = api.get(f"{API}harbor/")
    assert shown.status_code == 200 and PASSWORD not in shown.content.decode()
    settings = shown.json()["settings"]
    assert settings["suwayomi_password"] == MASK and settings["suwayomi_username"] == "reader"

    changed = api.patch(f"{API}harbor/", {"settings": {**settings, "rate_limit": 2}}, content_type="application/json")
    assert changed.status_code == 200, changed.content
    assert PASSWORD not in changed.content.decode()
    assert changed.json()["source"]["settings"]["suwayomi_password"] == MASK
    assert _stored(harbor) == {**harbor.settings, "rate_limit": 2}  # the password kept, the mask never stored

    replaced = api.patch(
        f"{API}harbor/", {"settings": {**settings, "suwayomi_password": "n3w-one"}}, content_type="application/json"
    )
    assert replaced.status_code == 200 and "n3w-one" not in replaced.content.decode()
    assert _stored(harbor)["suwayomi_password"] == "n3w-one"
    audits = _audits()
    assert AuditEvent.objects.filter(action="change_source").count() == 2
    assert PASSWORD not in audits and "n3w-one" not in audits


def test_a_masked_secret_with_nothing_stored_is_refused_by_the_contract_naming_the_key(operator, harbor):
    _, key = api_keys.mint(operator, "script", api_keys.OPERATE)
    bare = {k: v for k, v in harbor.settings.items() if k != "suwayomi_password"}
    Source.objects.filter(id="harbor").update(settings=bare)
    sent = {**bare, "suwayomi_password": MASK, "rate_limit": 3}
    answer = Client(HTTP_X_API_KEY=key).patch(f"{API}harbor/", {"settings": sent}, content_type="application/json")
    assert answer.status_code == 400 and "suwayomi_password" in answer.json()["detail"]
    assert _stored(harbor) == bare


def test_the_sources_page_settings_editor_shows_secrets_masked_and_saving_it_back_keeps_them(operator, harbor, shelf):
    page = _browser(operator)
    listed = page.get("/admin/crawler/sources/").content.decode()
    assert PASSWORD not in listed and TOKEN not in listed
    for source, secret in ((harbor, PASSWORD), (shelf, TOKEN)):
        editor = page.get(f"/admin/crawler/sources/{source.id}/settings/")
        body = editor.content.decode()
        assert editor.status_code == 200 and secret not in body and MASK in body
        shown = json.loads(re.search(r"<textarea[^>]*>(.*?)</textarea>", body, re.S).group(1).replace("&quot;", '"'))
        saved = page.post(
            f"/admin/crawler/sources/{source.id}/settings/", {"settings": json.dumps({**shown, "burst": 3})}
        )
        assert saved.status_code == 302, saved.content.decode()
        assert _stored(source) == {**source.settings, "burst": 3}
    assert PASSWORD not in _audits() and TOKEN not in _audits()


def test_the_admin_change_form_shows_secrets_masked_and_a_round_trip_edit_keeps_them(operator, harbor):
    admin = _browser(operator)
    form = admin.get(f"/admin/catalog/source/{harbor.id}/change/").content.decode()
    assert PASSWORD not in form and MASK in form
    shown = {**harbor.settings, "suwayomi_password": MASK, "rate_limit": 2}
    posted = admin.post(
        f"/admin/catalog/source/{harbor.id}/change/",
        {"name": "Harbor", "kind": "suwayomi", "base_url": harbor.base_url, "enabled": "on"}
        | {"settings": json.dumps(shown), "_save": "Save"},
    )
    assert posted.status_code == 302
    assert _stored(harbor) == {**harbor.settings, "rate_limit": 2}
    row = AuditEvent.objects.get(action="change_source")
    assert row.detail["changed"]["settings"]["after"]["suwayomi_password"] == MASK
    assert PASSWORD not in json.dumps(row.detail)


def test_staff_who_see_sources_read_only_in_the_admin_see_secrets_masked(watcher, harbor):
    from django.contrib.auth.models import Permission

    watcher.user_permissions.add(Permission.objects.get(content_type__app_label="catalog", codename="view_source"))
    shown = _browser(watcher).get(f"/admin/catalog/source/{harbor.id}/change/")
    body = shown.content.decode()
    assert shown.status_code == 200 and 'name="settings"' not in body
    assert PASSWORD not in body and "reader" in body and MASK in body


def test_removing_a_source_audits_its_settings_masked(operator, harbor, shelf):
    admin = _browser(operator)
    for source in (harbor, shelf):
        assert admin.post(f"/admin/catalog/source/{source.id}/delete/", {"post": "yes"}).status_code == 302
    rows = AuditEvent.objects.filter(action="remove_source")
    assert rows.count() == 2
    assert PASSWORD not in _audits() and TOKEN not in _audits()
    assert rows.get(target_id="shelf").detail["settings"]["headers"] == {"Authorization": MASK, "Accept-Language": "en"}
