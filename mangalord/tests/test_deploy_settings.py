"""Production settings: `check --deploy` is clean with the HTTPS-proxy environment of docs/install.md; unsafe keys are refused."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from mangalord.secret import secret_key

REPO = Path(__file__).resolve().parents[2]

# The values of docs/install.md#behind-an-https-proxy.
HTTPS_PROXY_ENV = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "manga.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://manga.example.com",
    "SECURE_PROXY_SSL_HEADER": "true",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
    "TRUSTED_PROXY_COUNT": "1",
}


def manage(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "SESSION_", "CSRF_"))}
    base.pop("DATABASE_URL", None)  # settings only: the embedded default needs no server
    base.update(MANGALORD_DATA_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args], env=base, cwd=tmp_path, capture_output=True, text=True
    )


def test_check_deploy_is_clean_with_the_documented_https_proxy_environment(tmp_path):
    env = {**HTTPS_PROXY_ENV, "SECRET_KEY": secrets.token_urlsafe(50)}
    result = manage(["check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_the_https_settings(tmp_path):
    result = manage(
        ["check", "--deploy", "--fail-level", "WARNING"], {"SECRET_KEY": secrets.token_urlsafe(50)}, tmp_path
    )
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_debug_off_with_the_published_development_key_refuses_to_start(tmp_path):
    result = manage(["check"], {"DEBUG": "false", "SECRET_KEY": "insecure-dev-key-change-me"}, tmp_path)
    assert result.returncode != 0
    assert "Invalid value for environment variable SECRET_KEY" in result.stderr
    assert "secrets.token_urlsafe(50)" in result.stderr


def test_debug_on_accepts_a_development_key(tmp_path):
    assert secret_key("insecure-dev-key-change-me", debug=True, data_dir=tmp_path) == "insecure-dev-key-change-me"


@pytest.mark.parametrize("key", ["short", "django-insecure-" + "x" * 60, "a" * 60])
def test_weak_keys_are_refused_outside_debug(key, tmp_path):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY"):
        secret_key(key, debug=False, data_dir=tmp_path)


def test_no_key_set_generates_one_per_data_directory_and_keeps_it(tmp_path):
    first = secret_key("", debug=False, data_dir=tmp_path)
    assert len(first) >= 50
    assert secret_key("", debug=False, data_dir=tmp_path) == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
    assert secret_key("", debug=False, data_dir=tmp_path / "other") != first
