"""The API throttles count per client address, and a client cannot choose its address with X-Forwarded-For."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def test_without_a_trusted_proxy_the_peer_address_is_the_client_whatever_x_forwarded_for_says(settings):
    assert settings.TRUSTED_PROXY_COUNT == 0
    # DRF reads None as "trust X-Forwarded-For whole"; 0 as "there is no proxy".
    assert api_settings.NUM_PROXIES == 0


def test_a_client_rotating_x_forwarded_for_is_still_throttled():
    limit, _ = ScopedRateThrottle().parse_rate(api_settings.DEFAULT_THROTTLE_RATES["login"])
    client = Client(REMOTE_ADDR="203.0.113.7")
    answers = [
        # An empty body is refused by the serializer, after the throttle counted it, and checks no password.
        client.post("/api/v1/auth/token/", {}, content_type="application/json", HTTP_X_FORWARDED_FOR=f"10.0.{n}.1")
        for n in range(limit + 1)
    ]
    assert [a.status_code for a in answers[:limit]] == [400] * limit
    assert answers[limit].status_code == 429


def test_another_address_has_its_own_count():
    limit, _ = ScopedRateThrottle().parse_rate(api_settings.DEFAULT_THROTTLE_RATES["login"])
    for _ in range(limit + 1):
        Client(REMOTE_ADDR="203.0.113.7").post("/api/v1/auth/token/", {}, content_type="application/json")
    other = Client(REMOTE_ADDR="203.0.113.8").post("/api/v1/auth/token/", {}, content_type="application/json")
    assert other.status_code == 400
