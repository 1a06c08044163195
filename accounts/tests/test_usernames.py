"""User names no account can have are refused at every door before a query, and count toward the address only."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client

from accounts.lockout import lockout_username
from accounts.tests.conftest import basic
from accounts.usernames import name_problem, new_name_problem

pytestmark = pytest.mark.sqlite_ok
SENDABLE = ["a\x00b", "x" * 151, "y" * 5000, "ad\u202emin", "a\x1bb", "zero\u200bwidth"]  # what UTF-8 can carry
HOSTILE = [*SENDABLE, "\ud800", ""]


@pytest.mark.parametrize("name", ["alice", "Ålesund", "o'brien", "with space", "x" * 150, "名前"])
def test_names_an_account_may_have_pass(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("name", HOSTILE)
def test_nul_control_bidi_invisible_and_over_long_names_are_no_ones(name):
    assert name_problem(name)


@pytest.mark.parametrize("name", ["with space", "o'brien", "a:b", "x" * 151, "a\x00b"])
def test_a_new_name_follows_djangos_user_name_rule_too(name):
    assert new_name_problem(name)


def test_a_new_name_of_letters_digits_and_signs_passes():
    assert new_name_problem("kira.k+ko_reader-2@home") is None


@pytest.mark.parametrize("name", HOSTILE[:-1])
def test_the_lockout_counts_a_hostile_name_toward_no_account(rf, name):
    assert lockout_username(rf.get("/"), {"username": name}) is None
    assert lockout_username(rf.get("/"), {"username": "alice"}) == "alice"


@pytest.mark.django_db
@pytest.mark.parametrize("name", SENDABLE)
@pytest.mark.parametrize("door", ["/opds/", "/api/v1/mangas/", "/api/v1/series"])
def test_basic_with_a_hostile_name_is_a_401_counted_toward_the_address(name, door):
    response = Client(REMOTE_ADDR="198.51.100.4").get(door, **basic(name, "whatever"))
    assert response.status_code == 401
    assert list(AccessAttempt.objects.values_list("username", "ip_address")) == [(None, "198.51.100.4")]


@pytest.mark.django_db
@pytest.mark.parametrize("name", [n for n in SENDABLE if "\x00" not in n])  # a raw NUL in a header: 400 first
def test_kosync_with_a_hostile_user_is_a_401_counted_toward_the_address(name):
    headers = {"HTTP_X_AUTH_USER": name, "HTTP_X_AUTH_KEY": "0" * 32}
    response = Client(REMOTE_ADDR="198.51.100.4").get("/kosync/users/auth", **headers)
    assert response.status_code == 401
    assert list(AccessAttempt.objects.values_list("username", "ip_address")) == [(None, "198.51.100.4")]
