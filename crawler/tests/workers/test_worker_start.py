"""What a worker process loads at its start: the crawl, not the web process's server, API or URLconf.

A cron line runs `crawl_worker --drain` every few minutes, so whatever the
command imports and checks at start is CPU paid again and again. Each test
runs a real child process and reads its `sys.modules`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.core.management import get_commands, load_command_class

from conftest import REPO_ROOT

# What only the web process uses: Daphne's server and Twisted's reactor, Django REST framework's views and
# serializers, drf-spectacular's schema machinery, and the URLconf with every view behind it; and what a
# worker needs only from its first job (httpx with the adapters) or its first chapter date (dateparser).
NOT_AT_START = (
    "twisted.internet.reactor",
    "daphne.server",
    "rest_framework.views",
    "rest_framework.serializers",
    "drf_spectacular.plumbing",
    "mangalord.urls",
    "httpx",
    "dateparser",
)

SET_UP = "import django; django.setup(); "
REPORT = f"import json, sys; print(json.dumps([m for m in {NOT_AT_START!r} if m in sys.modules]))"


def last_line(code: str, env: dict[str, str]) -> str:
    """What `python -c code` printed last, in a child process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def loaded_too_early(code: str, env: dict[str, str]) -> list[str]:
    return json.loads(last_line(code, env))


@pytest.fixture
def env(child_env):
    return {**child_env, "DJANGO_SETTINGS_MODULE": "mangalord.settings", "ANALYSIS_ENABLED": "false"}


def test_setting_django_up_for_the_worker_commands_loads_nothing_of_the_web_process(env):
    code = (
        SET_UP + "from django.core.management import load_command_class; "
        "load_command_class('crawler', 'crawl_worker'); load_command_class('analysis', 'analyze_worker'); " + REPORT
    )
    assert loaded_too_early(code, env) == []


@pytest.mark.django_db(transaction=True)
def test_an_idle_drain_runs_without_the_urlconf_or_the_api(env):
    """No system checks at a worker's start: they import the URLconf, and with it every view and DRF."""
    code = (
        SET_UP + "from django.core.management import call_command; "
        "call_command('crawl_worker', '--drain', '--no-schedule', '--workers', '2'); " + REPORT
    )
    assert loaded_too_early(code, env) == []


def test_runserver_is_still_daphnes():
    from daphne.management.commands.runserver import Command as DaphneRunserver

    assert isinstance(load_command_class(get_commands()["runserver"], "runserver"), DaphneRunserver)


@pytest.mark.django_db
def test_the_api_schema_still_describes_the_header_credentials(client):
    """The description is registered with the authentication class now, not at every process's start."""
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert {"tokenAuth", "basicAuth", "apiKeyAuth"} <= set(schema["components"]["securitySchemes"])


@pytest.mark.django_db(transaction=True)
def test_with_several_processes_the_adapters_are_imported_once_before_the_fork(env):
    """Each child would otherwise import them at its first job: once in the parent, shared copy-on-write."""
    code = (
        SET_UP + "import sys; from django.core.management import call_command; "
        "call_command('crawl_worker', '--drain', '--no-schedule', '--workers', '2', '--processes', '2'); "
        "print(sorted(m for m in ('httpx', 'sources.html', 'sources.mangadex.adapter',"
        " 'sources.suwayomi.adapter') if m in sys.modules))"
    )
    loaded = "['httpx', 'sources.html', 'sources.mangadex.adapter', 'sources.suwayomi.adapter']"
    assert last_line(code, env) == loaded
