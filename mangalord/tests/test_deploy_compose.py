"""deploy/compose.yaml stays a valid file that matches the settings it sets."""

import json
import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO_ROOT
from mangalord.tests.test_settings import start

pytestmark = pytest.mark.sqlite_ok

COMPOSE = Path(REPO_ROOT) / "deploy" / "compose.yaml"
APP_SERVICES = ("web", "crawl-worker-1", "crawl-worker-2", "analyze-worker", "notify-worker", "migrate")
PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "d = s.DATABASES['default']; o = s.STORAGES['default'].get('OPTIONS', {}); "
    "print(json.dumps({'host': d['HOST'], 'port': d['PORT'], 'pooled': d.get('DISABLE_SERVER_SIDE_CURSORS', False), "
    "'storage': s.STORAGES['default']['BACKEND'], 'bucket': o.get('bucket_name'), 'redis': s.REDIS_URL}))"
)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_the_stack_has_every_part_of_a_multi_host_deployment(compose):
    services = compose["services"]
    assert {"postgres", "pgbouncer", "s3", "redis", *APP_SERVICES} <= set(services)
    for name in APP_SERVICES:
        assert services[name]["build"] == {"context": "..", "dockerfile": "Dockerfile"}
    assert (COMPOSE.parent / services["web"]["build"]["context"] / "Dockerfile").exists()
    ini = (COMPOSE.parent / "pgbouncer" / "pgbouncer.ini").read_text()
    assert re.search(r"^pool_mode = transaction$", ini, re.M)


def test_every_variable_the_stack_sets_is_a_documented_setting(compose):
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", (Path(REPO_ROOT) / ".env.example").read_text(), re.M))
    for name in APP_SERVICES:
        assert set(compose["services"][name]["environment"]) <= documented, name


@pytest.mark.parametrize(
    ("service", "host", "pooled"), [("crawl-worker-1", "pgbouncer", True), ("migrate", "postgres", False)]
)
def test_the_stack_environment_starts_the_settings_it_means(tmp_path, compose, service, host, pooled):
    env = {k: str(v) for k, v in compose["services"][service]["environment"].items()}
    result = start(tmp_path, PROBE, **env)
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert (config["host"], config["pooled"]) == (host, pooled)
    assert (config["storage"], config["bucket"]) == ("catalog.s3.StreamingS3Storage", "mangalord")
    assert config["redis"] == "redis://redis:6379/0"
