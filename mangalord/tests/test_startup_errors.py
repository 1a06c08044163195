"""A bad setting or an unusable database stops start-up with one line and exit status 2: real `manage.py` runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from mangalord.startup import connection_failure
from testsupport.ports import free_port

pytestmark = pytest.mark.sqlite_ok


def manage(tmp_path, *args: str, cwd: str = REPO_ROOT, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("CRAWLER_", "JOBS_", "DATABASE_", "LOG_", "MEDIA_"))
    }
    base.update(MANGALORD_DATA_DIR=str(tmp_path), PYTHONPATH=REPO_ROOT)
    return subprocess.run(
        [sys.executable, os.path.join(REPO_ROOT, "manage.py"), *args],
        env={**base, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("variable", "value", "line"),
    [
        ("JOBS_WORKERS", "abc", "JOBS_WORKERS='abc': must be a positive integer"),
        ("JOBS_POLL_SECS", "soon", "JOBS_POLL_SECS='soon': must be a positive number"),
        ("LOG_LEVEL", "LOUD", "LOG_LEVEL='LOUD': must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("DEBUG", "ture", "DEBUG='ture': must be a boolean: true/false, 1/0, yes/no or on/off"),
        (
            "DATABASE_URL",
            "nonsense",
            "DATABASE_URL='nonsense': must be a database URL such as postgres://user:password@host:5432/name",
        ),
        (
            "DATABASE_URL",
            "postgres://me:hunter2@/",
            "DATABASE_URL='postgres://me:***@/': must be a database URL such as postgres://user:password@host:5432/name",
        ),
        (
            "CRAWLER_CHALLENGE_SOLVER_URL",
            "flaresolverr:8191",
            "CRAWLER_CHALLENGE_SOLVER_URL='flaresolverr:8191': must be an http(s) URL of a FlareSolverr endpoint, "
            "like http://flaresolverr:8191/v1 (or empty)",
        ),
        ("CRAWLER_CHALLENGE_WAIT_SECS", "0", "CRAWLER_CHALLENGE_WAIT_SECS='0': must be a positive integer"),
        ("ALLOWED_HOSTS", "", None),  # a valid (empty) list: no error
    ],
)
def test_a_bad_setting_is_one_line_naming_variable_value_and_what_is_accepted(tmp_path, variable, value, line):
    result = manage(tmp_path, "check", **{variable: value})
    if line is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    assert result.stderr == f"mangalord: Invalid value for environment variable {line}\n"


def test_a_missing_database_says_createdb(tmp_path):
    result = manage(
        tmp_path, "migrate", "--plan", DATABASE_URL="postgres://postgres@127.0.0.1:5432/mangalord_missing_db"
    )
    assert result.returncode == 2
    assert result.stderr == (
        "mangalord: cannot connect to postgres://postgres@127.0.0.1:5432/mangalord_missing_db (DATABASE_URL): "
        'database "mangalord_missing_db" does not exist (createdb mangalord_missing_db?)\n'
    )


def test_an_unreachable_database_says_where_it_looked(tmp_path):
    unused_port = free_port()
    result = manage(tmp_path, "migrate", "--plan", DATABASE_URL=f"postgres://me:hunter2@127.0.0.1:{unused_port}/lib")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "hunter2" not in result.stderr
    assert lines[0].startswith(
        f"mangalord: cannot connect to postgres://me@127.0.0.1:{unused_port}/lib (DATABASE_URL): "
    )
    assert "Connection refused" in lines[0] and lines[0].endswith("(is PostgreSQL running there? then: createdb lib)")


def test_a_data_dir_that_cannot_be_made_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = manage(tmp_path, "check", MANGALORD_DATA_DIR=str(blocker / "data"))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"mangalord: Invalid value for environment variable MANGALORD_DATA_DIR='{blocker}/data'"
    )
    assert len(result.stderr.splitlines()) == 1


def test_daphne_stops_on_a_bad_setting_with_the_same_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRAWLER_", "JOBS_"))}
    result = subprocess.run(
        [sys.executable, "-c", "import mangalord.asgi"],
        env={**env, "JOBS_WORKERS": "abc", "MANGALORD_DATA_DIR": str(tmp_path), "PYTHONPATH": REPO_ROOT},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        ["mangalord: Invalid value for environment variable JOBS_WORKERS='abc': must be a positive integer"],
    )


PATHS = "import django; django.setup(); from django.conf import settings as s; print(s.DATA_DIR); print(s.MEDIA_ROOT)"


def test_relative_paths_resolve_against_the_project_and_the_data_dir_not_the_cwd(tmp_path):
    base = {k: v for k, v in os.environ.items() if k not in ("MANGALORD_DATA_DIR", "MEDIA_ROOT")}
    result = subprocess.run(
        [sys.executable, "-c", PATHS],
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "mangalord.settings",
            "PYTHONPATH": REPO_ROOT,
            "MANGALORD_DATA_DIR": f"./{tmp_path.name}-data",
            "MEDIA_ROOT": "pictures",
        },  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    data = os.path.join(REPO_ROOT, f"{tmp_path.name}-data")
    try:
        assert result.stdout.splitlines() == [data, os.path.join(data, "pictures")]
    finally:
        import shutil

        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize(
    ("error", "line"),
    [
        ('near "SELEC": syntax error', None),
        (
            'connection failed: connection to server at "10.0.0.9", port 5432 failed: timeout expired',
            "cannot connect to postgres://u@10.0.0.9:5432/lib (DATABASE_URL): timeout expired "
            "(is PostgreSQL running there? then: createdb lib)",
        ),
    ],
)
def test_only_a_failed_connection_becomes_the_one_line(error, line):
    db = {"ENGINE": "django.db.backends.postgresql", "USER": "u", "HOST": "10.0.0.9", "PORT": 5432, "NAME": "lib"}
    assert connection_failure(Exception(error), db) == line
