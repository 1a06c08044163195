"""Lockout limits and request helpers shared by the lockout tests.

Limits in force with `lockout_limits`: LOGIN_FAILURE_LIMIT=5 per account,
LOGIN_ADDRESS_FAILURE_LIMIT lowered to 8 per address (20 by default) to keep
the address tests short, LOGIN_LOCKOUT_MINUTES=15.
"""

from __future__ import annotations

import base64

import pytest
from django.test import Client

ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 8
HOME = "127.0.0.1"
ELSEWHERE = "127.0.0.2"


@pytest.fixture
def lockout_limits(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = ACCOUNT_LIMIT
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = ADDRESS_LIMIT


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", "bob@example.com", "bob-password", is_staff=True)


def login(username: str, password: str, address: str = HOME, path: str = "/login/"):
    return Client(REMOTE_ADDR=address).post(path, {"username": username, "password": password})


def basic(username: str, password: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}
