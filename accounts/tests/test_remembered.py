"""Remembered credentials: checked once per burst, then no query and no lockout read, until something changes.

Each way a remembered credential is forgotten has its test: a password
change, a deactivation, a revoked API key, a deleted token, a failed login.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client, RequestFactory
from rest_framework.authtoken.models import Token

from accounts import api_keys, credentials, lockout, remembered
from accounts.tests.conftest import basic

KOMGA = "/api/v1/series"


@pytest.fixture
def lockout_reads(monkeypatch) -> list[str | None]:
    """The account name of every lockout read."""
    reads: list[str | None] = []
    original = lockout.refuse_if_locked
    monkeypatch.setattr(
        lockout, "refuse_if_locked", lambda request, username: reads.append(username) or original(request, username)
    )
    return reads


def test_a_remembered_password_skips_the_lockout_read_and_the_queries(
    db, alice, lockout_reads, django_assert_num_queries
):
    auth = basic("alice", "alice-password")
    assert Client().get(KOMGA, **auth).status_code == 200
    assert "alice" in lockout_reads
    lockout_reads.clear()
    with django_assert_num_queries(0):
        assert credentials.header_user(RequestFactory().get(KOMGA, **auth)).pk == alice.pk
    assert lockout_reads == []


@pytest.mark.django_db
def test_a_password_change_forgets_it(alice):
    client = Client()
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 200
    alice.set_password("another-password")
    alice.save()
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 401


@pytest.mark.django_db
def test_a_deactivation_forgets_it(alice):
    client = Client()
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 200
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 401


@pytest.mark.django_db
def test_a_revoked_key_is_forgotten(alice):
    key, raw = api_keys.mint(alice, "Mihon")
    client = Client()
    assert client.get(KOMGA, HTTP_X_API_KEY=raw).status_code == 200
    assert client.get(KOMGA, **basic("alice", raw)).status_code == 200
    assert api_keys.revoke(alice, key.pk)
    assert client.get(KOMGA, HTTP_X_API_KEY=raw).status_code == 401
    assert client.get(KOMGA, **basic("alice", raw)).status_code == 401


@pytest.mark.django_db
def test_a_deleted_token_is_forgotten(alice):
    token = Token.objects.create(user=alice)
    client = Client()
    assert client.get("/api/v1/mangas/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200
    token.delete()
    assert client.get("/api/v1/mangas/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 401


@pytest.mark.django_db
def test_a_failed_login_forgets_every_remembered_credential(alice, lockout_reads):
    client = Client()
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 200
    assert client.get(KOMGA, **basic("alice", "wrong")).status_code == 401
    lockout_reads.clear()
    assert client.get(KOMGA, **basic("alice", "alice-password")).status_code == 200
    assert "alice" in lockout_reads  # checked in full again: a lockout may have begun


def test_a_remembered_key_copy_is_the_requests_own():
    class User:
        pk = 7

    remembered.remember("k", User())
    first, second = remembered.recall("k"), remembered.recall("k")
    first.marked = True
    assert first is not second and not hasattr(second, "marked")


def test_a_burst_ends():
    class User:
        pk = 7

    remembered.remember("k", User(), now=100.0)
    assert remembered.recall("k", now=100.0 + remembered.BURST_SECS - 1) is not None
    assert remembered.recall("k", now=100.0 + remembered.BURST_SECS) is None


def test_only_the_latest_credentials_are_kept(monkeypatch):
    monkeypatch.setattr(remembered, "MAX_REMEMBERED", 2)

    class User:
        pk = 1

    for key in ("a", "b", "c"):
        remembered.remember(key, User())
    assert [remembered.recall(k) is not None for k in ("a", "b", "c")] == [False, True, True]


def test_concurrent_first_requests_check_the_credential_once():
    calls = []

    class User:
        pk = 3

    def verify(request, value):
        calls.append(value)
        time.sleep(0.05)
        return User()

    scheme = credentials.HeaderScheme("Test", lambda request: "secret", verify)
    users = []
    threads = [
        threading.Thread(target=lambda: users.append(credentials._checked_once(None, scheme, "secret")))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(users) == 6 and all(u.pk == 3 for u in users)


def test_the_credential_itself_is_never_kept():
    key = remembered.credential_key("Basic", "YWxpY2U6c2VjcmV0")
    assert "YWxpY2U6c2VjcmV0" not in key and key != remembered.credential_key("Token", "YWxpY2U6c2VjcmV0")
