"""Stored credentials are write-only in the admin: the source session cookie and API token keys are never shown.

The cookie is set only through the audited control (dashboard / API `session/`);
the crawler-state admin is read-only and masks it, the token admin masks keys.
"""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from crawler import state_store
from crawler.models import CrawlerState

COOKIE = "s3cr3t-SESSION-value,42"


@pytest.fixture
def admin_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_the_session_cookie_is_never_rendered_and_cannot_be_edited_in_the_admin(admin_client):
    state_store.store_session_cookie("demo", COOKIE)
    key = "session:demo:cookie"
    listing = admin_client.get("/admin/crawler/crawlerstate/")
    change = admin_client.get(f"/admin/crawler/crawlerstate/{key}/change/")
    assert listing.status_code == change.status_code == 200
    for page in (listing, change):
        html = page.content.decode()
        assert COOKIE not in html
        assert "write-only" in html
    admin_client.post(f"/admin/crawler/crawlerstate/{key}/change/", {"key": key, "value": '"evil"'})
    assert (
        admin_client.post("/admin/crawler/crawlerstate/add/", {"key": "session:x:cookie", "value": '"x"'}).status_code
        == 403
    )
    assert state_store.session_cookie("demo") == COOKIE
    assert not CrawlerState.objects.filter(key="session:x:cookie").exists()


@pytest.mark.sqlite_ok
@pytest.mark.django_db
def test_api_token_keys_are_masked_in_the_admin(admin_client, alice):
    key = Token.objects.create(user=alice).key
    html = admin_client.get("/admin/authtoken/tokenproxy/").content.decode()
    assert key[:4] + "…" in html
    assert key not in html
