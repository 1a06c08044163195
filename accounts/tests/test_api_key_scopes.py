"""API keys carry a scope (`read` by default, `operate` for operators on request) and a name that is safe to store.

Who each scope reaches over every admin route: console/tests/api/test_key_scope_matrix.py.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts import api_keys
from accounts.api_keys import ApiKey

pytestmark = pytest.mark.sqlite_ok  # on the embedded SQLite backend too (PostgreSQL is the default run)

# Each refused with a message naming the problem: on PostgreSQL a NUL or a lone surrogate would otherwise be a 500.
BAD_NAMES = {
    "nul": "phone\x00",
    "bell": "ph\x07one",
    "escape": "\x1b[31mred",
    "unit separator": "a\x1fb",
    "right-to-left override": "evil\u202egnp.exe",
    "isolate": "\u2066name\u2069",
    "lone surrogate": "bad\ud800",
    "too long": "x" * (api_keys.MAX_NAME + 1),
    "far too long": "x" * 1_000_000,
    "blank": " \t\n ",
}


@pytest.mark.parametrize("case", sorted(BAD_NAMES))
def test_a_bad_key_name_is_refused_with_a_reason(case):
    with pytest.raises(api_keys.BadKeyName, match="key name|Give the key a name"):
        api_keys.clean_name(BAD_NAMES[case])


def test_a_pasted_name_has_its_whitespace_folded():
    assert api_keys.clean_name("  Mihon\ton\nmy phone \r\n") == "Mihon on my phone"
    assert api_keys.clean_name("Ünïcode 漫画 📚") == "Ünïcode 漫画 📚"


def test_refused_character_names_the_character_and_where_it_is():
    assert api_keys.refused_character("ab\x00") == "control character U+0000 at position 3"
    assert api_keys.refused_character("a\u202eb") == "bidirectional-text control U+202E at position 2"
    assert api_keys.refused_character("plain name") is None


# A form post is UTF-8 bytes: a lone surrogate cannot be sent in one (it arrives as U+FFFD, a fine character).
@pytest.mark.parametrize("case", sorted(set(BAD_NAMES) - {"lone surrogate"}))
def test_the_account_page_answers_400_to_a_bad_name_and_stores_nothing(alice, case):
    client = Client()
    client.force_login(alice)
    response = client.post("/account/", {"name": BAD_NAMES[case]})
    assert response.status_code == 400
    assert b"key name" in response.content or b"Give the key a name" in response.content
    assert not ApiKey.objects.exists()


def test_the_admin_refuses_a_bad_name_as_a_form_error(staff, alice):
    admin = Client()
    admin.force_login(staff)
    for name in ("ph\x07one", "evil\u202egnp", "x" * 101):
        response = admin.post("/admin/accounts/apikey/add/", {"user": alice.pk, "name": name, "scope": "read"})
        assert response.status_code == 200 and b"errornote" in response.content, name
    assert not ApiKey.objects.exists()


def test_a_key_is_read_unless_an_operator_asks_for_operate(alice, operator):
    assert api_keys.mint(alice, "Mihon")[0].scope == api_keys.READ
    assert api_keys.mint(operator, "KOReader")[0].scope == api_keys.READ
    assert api_keys.mint(operator, "my script", api_keys.OPERATE)[0].scope == api_keys.OPERATE
    with pytest.raises(api_keys.BadKeyScope, match="crawler.operate_crawler"):
        api_keys.mint(alice, "sneaky", api_keys.OPERATE)
    with pytest.raises(api_keys.BadKeyScope, match="Unknown key scope"):
        api_keys.mint(operator, "typo", "admin")
    assert ApiKey.objects.filter(user=alice).count() == 1


def test_the_account_page_offers_operate_to_operators_only_and_lists_every_scope(alice, operator):
    reader = Client()
    reader.force_login(alice)
    assert b'name="scope"' not in reader.get("/account/").content
    refused = reader.post("/account/", {"name": "sneaky", "scope": "operate"})
    assert refused.status_code == 400 and b"operate key is only for users holding" in refused.content
    assert not ApiKey.objects.filter(user=alice).exists()

    ops = Client()
    ops.force_login(operator)
    assert b'name="scope"' in ops.get("/account/").content
    assert ops.post("/account/", {"name": "Mihon"}).status_code == 200
    assert ops.post("/account/", {"name": "script", "scope": "operate"}).status_code == 200
    scopes = dict(ApiKey.objects.filter(user=operator).values_list("name", "scope"))
    assert scopes == {"Mihon": "read", "script": "operate"}
    listing = ops.get("/account/").content.decode()
    assert re.findall(r'<td class="key-scope">(\w+)</td>', listing) == ["operate", "read"]


def test_the_admin_lists_scopes_and_makes_operate_keys_for_operators_only(staff, alice, operator, watcher):
    admin = Client()
    admin.force_login(staff)
    refused = admin.post("/admin/accounts/apikey/add/", {"user": alice.pk, "name": "x", "scope": "operate"})
    assert refused.status_code == 200 and b"operate key is only for users holding" in refused.content
    made = admin.post("/admin/accounts/apikey/add/", {"user": operator.pk, "name": "script", "scope": "operate"})
    assert made.status_code == 302
    assert ApiKey.objects.get().scope == api_keys.OPERATE
    assert '<td class="field-scope">operate: also' in admin.get("/admin/accounts/apikey/").content.decode()

    # Staff who may add keys but do not operate hand out read keys only, even for an operator.
    from django.contrib.auth.models import Permission

    watcher.user_permissions.add(*Permission.objects.filter(codename__in=["add_apikey", "view_apikey", "view_user"]))
    clerk = Client()
    clerk.force_login(watcher)
    form = clerk.get("/admin/accounts/apikey/add/").content.decode()
    assert 'value="read"' in form and 'value="operate"' not in form
    clerk.post("/admin/accounts/apikey/add/", {"user": operator.pk, "name": "mine now", "scope": "operate"})
    assert not ApiKey.objects.filter(name="mine now").exists()


def test_a_signed_in_key_carries_its_scope_and_a_session_carries_none(operator):
    _, raw = api_keys.mint(operator, "script", api_keys.OPERATE)
    user = api_keys.signed_in_with(api_keys.find(raw))
    assert api_keys.key_scope(user) == api_keys.OPERATE and api_keys.may_operate_with(user)
    assert api_keys.key_scope(api_keys.narrowed_to_read(user)) == api_keys.READ
    assert not api_keys.may_operate_with(user)
    assert api_keys.key_scope(operator) is None and api_keys.may_operate_with(operator)


def test_an_operate_key_works_only_while_its_owner_operates(operator):
    from console.control.operators import can_operate, can_watch

    _, raw = api_keys.mint(operator, "script", api_keys.OPERATE)
    assert can_operate(api_keys.signed_in_with(api_keys.find(raw)))
    operator.groups.remove(Group.objects.get(name="Operators"))
    after = api_keys.signed_in_with(api_keys.find(raw))
    assert not can_operate(after) and not can_watch(after)  # staff still, but a key never merely watches


BEFORE_SCOPES = [("accounts", "0001_api_keys")]


@pytest.mark.django_db(transaction=True)
def test_keys_made_before_scopes_become_read_keys():
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(BEFORE_SCOPES)
        apps = executor.loader.project_state(BEFORE_SCOPES).apps
        owner = apps.get_model("auth", "User").objects.create(username="olga", is_active=True, is_superuser=True)
        old = apps.get_model("accounts", "ApiKey")
        for n in range(3):
            old.objects.create(user=owner, name=f"key {n}", hint=f"h{n}", digest=f"d{n}", kosync_digest=f"k{n}")

        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        assert sorted(ApiKey.objects.values_list("name", "scope")) == [(f"key {n}", "read") for n in range(3)]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def test_a_key_never_turns_into_a_session_or_a_token(operator, settings):
    """A key is not its owner's password: no login form or token endpoint takes it (each would carry full rights)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    _, raw = api_keys.mint(operator, "script", api_keys.OPERATE)
    token = Client().post(
        "/api/v1/auth/token/", {"username": operator.username, "password": raw}, content_type="application/json"
    )
    assert token.status_code == 400
    for login in ("/admin/login/", "/login/"):
        client = Client()
        client.post(login, {"username": operator.username, "password": raw})
        assert "_auth_user_id" not in client.session, login
