"""READER_DEFAULT_LANGUAGE: read once at start-up, a bad value names the variable."""

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.sqlite_ok
PROBE = "import django; django.setup(); from django.conf import settings; print(settings.READER_DEFAULT_LANGUAGE)"


def start(tmp_path, value: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mangalord.settings", "MANGALORD_DATA_DIR": str(tmp_path)}
    env.update(PYTHONPATH=REPO_ROOT, READER_DEFAULT_LANGUAGE=value)
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )


def test_a_language_code_is_accepted(tmp_path):
    result = start(tmp_path, "pt-BR")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pt-BR"


def test_a_bad_language_stops_start_up_naming_the_variable(tmp_path):
    result = start(tmp_path, "english please")
    assert result.returncode != 0
    assert "READER_DEFAULT_LANGUAGE" in result.stderr
