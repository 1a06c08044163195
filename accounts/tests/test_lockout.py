"""Login lockout on every way in: the login forms, OPDS Basic, the token endpoint and API tokens.

Limits in force here: `lockout_limits` (accounts/tests/conftest.py). API keys, the Komga API and
kosync: test_api_key_lockout.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import AsyncClient, Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle

from accounts.lockout import failures_toward_lockout
from accounts.tests.conftest import ACCOUNT_LIMIT, ADDRESS_LIMIT, ELSEWHERE, HOME, basic, login

pytestmark = pytest.mark.usefixtures("lockout_limits")


def token(username: str, password: str, address: str = HOME):
    return Client(REMOTE_ADDR=address).post(
        "/api/v1/auth/token/", {"username": username, "password": password}, content_type="application/json"
    )


@pytest.mark.parametrize(
    ("account", "address", "locked"),
    [
        (0, 0, False),
        (4, 4, False),
        (5, 5, True),  # the account's limit
        (0, 7, False),
        (0, 8, True),  # the address's limit, whatever the account
        (4, 7, False),
        (1, 20, True),
    ],
)
def test_failures_toward_lockout_truth_table(account, address, locked):
    score = failures_toward_lockout(account, address, account_limit=ACCOUNT_LIMIT, address_limit=ADDRESS_LIMIT)
    assert (score >= ACCOUNT_LIMIT) is locked


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_login_form_locks_the_account_and_refuses_the_right_password(alice, bob, path):
    for _ in range(ACCOUNT_LIMIT - 1):
        assert login("alice", "wrong", path=path).status_code == 200  # the form again, with its error
    locked = login("alice", "wrong", path=path)
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    assert int(locked["Retry-After"]) == 15 * 60
    assert login("alice", "alice-password", path=path).status_code == 429
    assert login("alice", "alice-password", ELSEWHERE, path=path).status_code == 429  # the account, anywhere
    assert login("bob", "bob-password", path=path).status_code == 302  # another account from the same address


@pytest.mark.django_db
def test_an_address_locks_after_its_own_limit_for_every_account(alice, bob):
    for n in range(ADDRESS_LIMIT):
        login(f"guess-{n}", "wrong")  # a sprayer: one try per name, no account reaches its limit
    assert login("bob", "bob-password").status_code == 429
    assert login("bob", "bob-password", ELSEWHERE).status_code == 302


@pytest.mark.django_db
def test_the_lockout_ends_after_the_cooloff(alice):
    for _ in range(ACCOUNT_LIMIT):
        login("alice", "wrong")
    assert login("alice", "alice-password").status_code == 429
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        assert login("alice", "alice-password").status_code == 302


@pytest.mark.django_db
def test_opds_basic_locks_out_even_a_remembered_password(client, alice, bob):
    assert client.get("/opds/", **basic("alice", "alice-password")).status_code == 200  # remembered from now on
    for _ in range(ACCOUNT_LIMIT - 1):
        assert client.get("/opds/", **basic("alice", "wrong")).status_code == 401
    assert client.get("/opds/", **basic("alice", "wrong")).status_code == 429
    refused = client.get("/opds/", **basic("alice", "alice-password"))
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert (
        client.get(
            "/opds/chapters/00000000-0000-0000-0000-000000000000/cbz/", **basic("alice", "alice-password")
        ).status_code
        == 429
    )
    assert client.get("/opds/", **basic("bob", "bob-password")).status_code == 200
    assert client.get("/api/v1/mangas/", **basic("alice", "alice-password")).status_code == 429  # the API too


@pytest.mark.django_db
def test_token_endpoint_locks_out_and_counts_with_the_other_ways_in(alice, bob):
    assert token("alice", "alice-password").status_code == 200
    for _ in range(ACCOUNT_LIMIT - 2):
        assert token("alice", "wrong").status_code == 400
    Client().get("/opds/", **basic("alice", "wrong"))  # a failure by another way in counts toward the same lock
    refused = token("alice", "wrong")
    assert refused.status_code == 429 and "Too many failed logins" in refused.json()["detail"]
    assert token("alice", "alice-password").status_code == 429
    assert login("alice", "alice-password").status_code == 429
    assert token("bob", "bob-password").status_code == 200


@pytest.mark.django_db
def test_token_endpoint_is_throttled_per_address(alice, monkeypatch):
    # DRF reads its rates once, at import: the class attribute is where a test can lower them.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "1000/minute", "login": "3/minute"})
    answers = [token("nobody", "wrong").status_code for _ in range(4)]
    assert answers == [400, 400, 400, 429]


@pytest.mark.django_db
def test_wrong_api_tokens_count_toward_the_address(alice):
    key = Token.objects.create(user=alice).key
    client = Client(REMOTE_ADDR=HOME)
    for n in range(ADDRESS_LIMIT):
        assert client.get("/api/v1/mangas/", HTTP_AUTHORIZATION=f"Token {n:040x}").status_code in (401, 429)
    assert client.get("/api/v1/mangas/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 429
    elsewhere = Client(REMOTE_ADDR=ELSEWHERE)
    assert elsewhere.get("/api/v1/mangas/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


@pytest.mark.django_db
def test_the_admin_action_and_the_command_unlock_an_account(alice, bob, staff):
    for _ in range(ACCOUNT_LIMIT):
        login("alice", "wrong")
        login("bob", "wrong", ELSEWHERE)
    admin = Client()
    admin.force_login(staff)
    response = admin.post(
        "/admin/auth/user/", {"action": "unlock_logins", "_selected_action": [str(alice.pk)]}, follow=True
    )
    assert "Unlocked 1 account(s)" in response.content.decode()
    assert login("alice", "alice-password").status_code == 302
    assert login("bob", "bob-password", ELSEWHERE).status_code == 429
    call_command("axes_reset_username", "bob")
    assert login("bob", "bob-password", ELSEWHERE).status_code == 302


@pytest.mark.django_db
def test_only_user_managers_see_the_unlock_action(operator):
    assert Group.objects.get(name="Operators")  # operators run the crawler, not the accounts
    client = Client()
    client.force_login(operator)
    assert client.get("/admin/auth/user/").status_code == 403


@pytest.mark.django_db
def test_a_lockout_is_answered_as_under_wsgi_when_served_over_asgi(alice):
    """Daphne runs the middleware chain asynchronously: the locking failure is a 429, not a 500 (axes' async
    branch once handed the credentials over in place of the view's response)."""
    client = AsyncClient()  # from 127.0.0.1 (HOME), the ASGI scope's default client address
    wrong = {"Authorization": basic("alice", "wrong")["HTTP_AUTHORIZATION"]}
    for _ in range(ACCOUNT_LIMIT - 1):
        assert async_to_sync(client.get)("/opds/", headers=wrong).status_code == 401
    locked = async_to_sync(client.get)("/api/v1/series", headers=wrong)
    assert locked.status_code == 429 and "Too many failed logins" in locked.json()["detail"]  # the view's JSON
    form = async_to_sync(client.post)("/login/", {"username": "alice", "password": "alice-password"})
    assert form.status_code == 429 and b"Too many failed logins" in form.content
    assert int(form["Retry-After"]) == 15 * 60
