"""kosync registration, when an operator turns it on: validated names and keys, no password oracle, throttled."""

from __future__ import annotations

import hashlib

import pytest
from django.test import Client

from accounts.api_keys import ApiKey

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]
SHARED = hashlib.md5(b"123456").hexdigest()


@pytest.fixture(autouse=True)
def _registration_on(settings):
    settings.KOSYNC_ALLOW_REGISTRATION = True


def register(username, password, address="192.0.2.10"):
    body = {"username": username, "password": password}
    return Client(REMOTE_ADDR=address).post("/kosync/users/create", body, content_type="application/json")


def signs_in(username, password):
    headers = {"HTTP_X_AUTH_USER": username, "HTTP_X_AUTH_KEY": password}
    return Client(REMOTE_ADDR="192.0.2.99").get("/kosync/users/auth", **headers).status_code == 200


def test_two_people_who_chose_the_same_password_both_register_and_sign_in(django_user_model):
    assert register("kira", SHARED).status_code == 201
    # Unsalted, the unique key digest refused this one: it told a stranger some account uses "123456".
    assert register("lena", SHARED, address="192.0.2.11").status_code == 201
    assert signs_in("kira", SHARED) and signs_in("lena", SHARED)
    assert not signs_in("kira", hashlib.md5(b"other").hexdigest())
    assert ApiKey.objects.filter(user__username__in=["kira", "lena"]).values("kosync_digest").distinct().count() == 2


def test_a_taken_name_is_refused_and_the_account_keeps_its_key(django_user_model):
    assert register("kira", SHARED).status_code == 201
    again = register("kira", hashlib.md5(b"takeover").hexdigest(), address="192.0.2.11")
    assert again.status_code == 402 and again.json()["code"] == 2002
    assert signs_in("kira", SHARED) and not signs_in("kira", hashlib.md5(b"takeover").hexdigest())


@pytest.mark.parametrize(
    "username",
    ["x" * 151, "a\x00b", "ad\u202emin", "a\x1bb", "with space", "a:b", "", 7, None],
)
def test_a_name_no_admin_would_give_is_refused_and_nothing_is_made(django_user_model, username):
    response = register(username, SHARED)
    assert response.status_code == 403 and response.json()["code"] == 2003
    assert not django_user_model.objects.exists()


@pytest.mark.parametrize("password", ["", "0" * 31, "0" * 33, "z" * 32, "\x00" * 32, "f" * 5000, 12345])
def test_a_key_that_is_not_koreaders_md5_is_refused(django_user_model, password):
    assert register("kira", password).status_code == 403
    assert not django_user_model.objects.exists()


def test_registrations_are_throttled_per_address(django_user_model):
    from rest_framework.settings import api_settings
    from rest_framework.throttling import SimpleRateThrottle

    limit, _ = SimpleRateThrottle.parse_rate(None, api_settings.DEFAULT_THROTTLE_RATES["kosync_register"])
    for n in range(limit):
        assert register(f"user{n}", SHARED).status_code == 201
    refused = register("one-more", SHARED)
    assert refused.status_code == 429
    assert not django_user_model.objects.filter(username="one-more").exists()
    assert register("one-more", SHARED, address="192.0.2.200").status_code == 201


def test_refused_registrations_count_toward_the_throttle_too(django_user_model):
    from rest_framework.settings import api_settings
    from rest_framework.throttling import SimpleRateThrottle

    limit, _ = SimpleRateThrottle.parse_rate(None, api_settings.DEFAULT_THROTTLE_RATES["kosync_register"])
    for _ in range(limit):
        register("a:b", SHARED)
    assert register("kira", SHARED).status_code == 429
