"""The lockout covers API keys and the reader apps' ways in: the Komga API, kosync, a key in the catalog URL.

A wrong key counts like a wrong password: as Basic's password or in kosync's
headers toward the account they name, in `X-API-Key` (which names none)
toward the address. While an account or address is locked, its right keys
are refused everywhere too. Limits: `lockout_limits` (conftest.py).
"""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import api_keys
from accounts.tests.conftest import ACCOUNT_LIMIT, ADDRESS_LIMIT, ELSEWHERE, basic, login

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("lockout_limits")]

KOMGA = "/api/v1/series"


@pytest.fixture
def keys(alice, bob) -> dict[str, str]:
    return {"alice": api_keys.mint(alice, "Mihon")[1], "bob": api_keys.mint(bob, "Mihon")[1]}


def kosync(username: str, raw_key: str) -> dict[str, str]:
    return {"HTTP_X_AUTH_USER": username, "HTTP_X_AUTH_KEY": api_keys.kosync_key(raw_key)}


def every_way_in(client: Client, username: str, raw_key: str) -> dict[str, int]:
    """The status each way a reader app brings `raw_key` is answered with."""
    return {
        "komga X-API-Key": client.get(KOMGA, HTTP_X_API_KEY=raw_key).status_code,
        "komga Basic": client.get(KOMGA, **basic(username, raw_key)).status_code,
        "opds Basic": client.get("/opds/", **basic(username, raw_key)).status_code,
        "key path": client.get(f"/key/{raw_key}/opds/").status_code,
        "kosync": client.get("/kosync/users/auth", **kosync(username, raw_key)).status_code,
    }


def test_wrong_keys_as_the_basic_password_lock_the_account_and_its_right_keys(keys):
    client = Client()
    for n in range(ACCOUNT_LIMIT - 1):
        wrong = client.get(KOMGA, **basic("alice", f"mlk_wrong-{n}"))
        assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Basic ")
    assert client.get(KOMGA, **basic("alice", "mlk_wrong-last")).status_code == 429
    # The account, from anywhere and by every way in; bob is unaffected.
    assert set(every_way_in(Client(REMOTE_ADDR=ELSEWHERE), "alice", keys["alice"]).values()) == {429}
    assert set(every_way_in(client, "bob", keys["bob"]).values()) == {200}


def test_wrong_x_api_keys_lock_the_address(keys):
    client = Client()
    for n in range(ADDRESS_LIMIT - 1):
        assert client.get(KOMGA, HTTP_X_API_KEY=f"mlk_wrong-{n}").status_code == 401
    locked = client.get(KOMGA, HTTP_X_API_KEY="mlk_wrong-last")
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0
    # A key names no account, so the address is what locks: every account's right key from here is refused...
    assert set(every_way_in(client, "bob", keys["bob"]).values()) == {429}
    # ...and the same key from another address is not.
    assert set(every_way_in(Client(REMOTE_ADDR=ELSEWHERE), "bob", keys["bob"]).values()) == {200}


def test_wrong_kosync_keys_lock_the_account(keys):
    client = Client()
    for n in range(ACCOUNT_LIMIT - 1):
        wrong = client.get("/kosync/users/auth", **kosync("alice", f"mlk_wrong-{n}"))
        assert wrong.status_code == 401 and wrong.json()["code"] == 2001
    locked = client.get("/kosync/users/auth", **kosync("alice", "mlk_wrong-last"))
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0 and "Too many" in locked.json()["message"]
    assert set(every_way_in(Client(REMOTE_ADDR=ELSEWHERE), "alice", keys["alice"]).values()) == {429}
    assert login("alice", "alice-password", ELSEWHERE).status_code == 429  # the password too: one lock
    assert set(every_way_in(client, "bob", keys["bob"]).values()) == {200}


def test_an_account_locked_at_the_login_form_is_refused_on_the_komga_api_with_its_right_key(keys):
    assert set(every_way_in(Client(), "alice", keys["alice"]).values()) == {200}
    for _ in range(ACCOUNT_LIMIT):
        login("alice", "wrong")
    refused = Client(REMOTE_ADDR=ELSEWHERE).get(KOMGA, HTTP_X_API_KEY=keys["alice"])
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert set(every_way_in(Client(REMOTE_ADDR=ELSEWHERE), "alice", keys["alice"]).values()) == {429}
    assert set(every_way_in(Client(), "bob", keys["bob"]).values()) == {200}
