"""The Sources page adds a Suwayomi source: the server's sources listed, one picked, its dry run, the row."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from django.test import Client

from catalog.models import Source
from crawler.models import AuditEvent
from testsupport.suwayomi.catalog import HAFEN, HARBOR, NIGHT
from testsupport.suwayomi.server import SERVER_VERSION, SuwayomiStandin, suwayomi_standin

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]
ADD = "/admin/crawler/sources/add-suwayomi/"
LOGIN = {"username": "reader", "password": "secret", "auth": "login"}


@pytest.fixture
def client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")  # the admin's same-origin check on every POST
    client.force_login(operator)
    return client


@pytest.fixture
def standin() -> Iterator[SuwayomiStandin]:
    with suwayomi_standin(auth="login") as server:
        yield server
    assert server.invalid == []


def _rows(html: str) -> list[tuple[str, ...]]:
    """(id, name, language, NSFW, walked by) of each row of the server's sources table."""
    rows = re.findall(r'<tr data-source="(\d+)">(.*?)</tr>', html, re.S)
    return [
        (sid, *(re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", body, re.S)[1:5]))
        for sid, body in rows
    ]


def test_the_servers_sources_are_listed_with_language_and_nsfw_flag(client, standin):
    page = client.post(ADD, {"step": "list", "server_url": standin.base_url, **LOGIN})
    assert page.status_code == 200
    assert _rows(page.content.decode()) == [
        (HARBOR.id, "Harbor Scans (EN)", "en", "-", "latest"),
        (HAFEN.id, "Harbor Scans (DE)", "de", "-", "latest"),
        (NIGHT.id, "Night Shelf (EN)", "en", "NSFW", "popular"),
    ]
    assert f"(Suwayomi-Server {SERVER_VERSION})" in page.content.decode()
    assert Source.objects.count() == 0


def test_picking_one_shows_its_dry_run_then_adds_it_audited(client, standin):
    form = {"step": "confirm", "server_url": standin.base_url, **LOGIN, "source": HARBOR.id, "name": ""}
    preview = client.post(ADD, {**form, "action": "preview"})
    assert preview.status_code == 200, preview.content.decode()[-800:]
    assert "Crimson Tide" in preview.content.decode() and Source.objects.count() == 0
    added = client.post(ADD, {**form, "action": "add"})
    assert added.status_code == 302
    row = Source.objects.get()
    assert (row.id, row.name, row.kind) == ("harbor-scans-en", "Harbor Scans (EN)", "suwayomi")
    assert row.settings == {
        "suwayomi_source": HARBOR.id, "suwayomi_auth": "login", "suwayomi_username": "reader",
        "suwayomi_password": "secret", "language": "en",
    }  # fmt: skip
    audited = AuditEvent.objects.get(action="add_source", target_id=row.id)
    assert audited.detail["settings"]["suwayomi_password"] == "(hidden)"  # an audit row carries no secret
    assert "secret" not in str(audited.detail)
    listed = client.get("/admin/crawler/sources/").content.decode()
    assert "Harbor Scans (EN)" in listed
    assert re.search(r'data-col="rate-limit"[^>]*>2.0/s, 2 at once</td>', listed)  # its politeness, as for any source


def test_a_server_that_refuses_the_credentials_changes_nothing_and_says_which_keys(client, standin):
    page = client.post(ADD, {"step": "list", "server_url": standin.base_url, **LOGIN, "password": "wrong"})
    assert page.status_code == 400
    assert "suwayomi_username" in page.content.decode()
    assert Source.objects.count() == 0


def test_a_source_missing_from_the_server_is_refused_with_nothing_saved(client, standin):
    form = {"step": "confirm", "server_url": standin.base_url, **LOGIN, "source": "123", "action": "add"}
    page = client.post(ADD, form)
    assert page.status_code == 400
    assert "has no source '123': no installed extension has a source of that id" in html.unescape(page.content.decode())
    assert Source.objects.count() == 0


def test_half_the_credentials_is_a_form_error(client):
    page = client.post(ADD, {"step": "list", "server_url": "http://suwayomi:4567", "username": "reader"})
    assert page.status_code == 400
    assert "give both the username and the password" in page.content.decode()
