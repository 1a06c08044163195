"""The signed page URL settings (mangalord/serving_settings.py): defaults, the derived key, and each refusal."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from mangalord.serving_settings import derived_key, signing_settings

pytestmark = pytest.mark.sqlite_ok
SECRET = "a-secret-key-for-this-test"
NAMES = ("SERVE_SIGNED_URLS", "SERVE_SIGNING_KEY", "SERVE_SIGNED_URL_TTL", "SERVE_SIGNED_BY_NGINX")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def test_the_defaults_sign_for_an_hour_with_a_key_derived_from_the_secret_key():
    enabled, key, lifetime, by_nginx = signing_settings(SECRET)
    assert enabled is True and lifetime == 3600 and by_nginx is False
    assert key == derived_key(SECRET) and key != SECRET and SECRET not in key and len(key) == 64
    assert derived_key("another secret") != key


def test_a_given_key_is_used_as_written(monkeypatch):
    monkeypatch.setenv("SERVE_SIGNING_KEY", "k" * 32)
    monkeypatch.setenv("SERVE_SIGNED_BY_NGINX", "true")
    monkeypatch.setenv("SERVE_SIGNED_URL_TTL", "600")
    assert signing_settings(SECRET) == (True, "k" * 32, 600, True)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SERVE_SIGNING_KEY", "short"),
        ("SERVE_SIGNING_KEY", 'with "quotes" and $vars ' + "x" * 32),
        ("SERVE_SIGNED_URL_TTL", "59"),
        ("SERVE_SIGNED_URL_TTL", "604801"),
        ("SERVE_SIGNED_URL_TTL", "soon"),
        ("SERVE_SIGNED_URLS", "ture"),
        ("SERVE_SIGNED_BY_NGINX", "true"),  # without a key of its own: nginx's configuration could not hold it
    ],
)
def test_a_bad_value_stops_start_up_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=name):
        signing_settings(SECRET)
