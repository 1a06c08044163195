"""Shared fixtures: personas (anonymous, user, staff, operator, watcher) and the environment for child processes."""

import os
import sys

import pytest
from django.db import connection
from rest_framework.test import APIClient

REPO_ROOT = os.path.dirname(os.path.abspath(__file__))

# Every fixture site of the suite (demo site, theme sites, stand-ins) listens on 127.0.0.1, which the
# outbound rule refuses by default: the tests allow it, as an operator with a local site would. Set in the
# environment too, so the processes the tests start (workers, servers) inherit it through `child_env`.
# The outbound guard's own tests take the allowance away (`no_outbound_allowance`).
TEST_ALLOWED_NETWORKS = "127.0.0.1/32,::1/128"
os.environ.setdefault("OUTBOUND_ALLOWED_NETWORKS", TEST_ALLOWED_NETWORKS)

pytest_plugins = [
    "demo.site.fixtures",
    "testsupport.theme_sites.fixtures",
    "testsupport.mangadex.fixtures",
    "testsupport.deployment_fixtures",
    "testsupport.browser",
]


@pytest.fixture
def anon_client() -> APIClient:
    return APIClient(enforce_csrf_checks=True)


@pytest.fixture
def alice(django_user_model):
    """A signed-in reader with no staff rights."""
    return django_user_model.objects.create_user("alice", "alice@example.com", "alice-password")


@pytest.fixture
def staff(django_user_model):
    """A superuser: staff with every permission, allowed on every admin route."""
    return django_user_model.objects.create_user(
        "sam", "sam@example.com", "sam-password", is_staff=True, is_superuser=True
    )


@pytest.fixture
def operator(django_user_model):
    """Staff in the "Operators" group (migrations crawler 0007, jobs 0002): may run every crawler control."""
    from importlib import import_module

    from django.apps import apps
    from django.contrib.auth.models import Group
    from django.contrib.contenttypes.models import ContentType

    if not Group.objects.filter(name="Operators").exists():
        # A transactional test before this one flushed the rows the migrations made: make them again, the same way.
        import_module("crawler.migrations.0007_operate_crawler_permission").create_operators(apps, None)
        import_module("jobs.migrations.0002_content_types_follow_the_models").forward(apps, None)
        import_module("analysis.migrations.0002_operators_view_page_analyses").grant(apps, None)
        import_module("catalog.migrations.0012_series_above_source_mangas").grant_merge_to_operators(apps, None)
        ContentType.objects.clear_cache()
    user = django_user_model.objects.create_user("olga", "olga@example.com", "olga-password", is_staff=True)
    user.groups.add(Group.objects.get(name="Operators"))
    return user


@pytest.fixture
def watcher(django_user_model):
    """Staff without the operate permission: sees the dashboard and the lists, runs nothing."""
    return django_user_model.objects.create_user("walt", "walt@example.com", "walt-password", is_staff=True)


@pytest.fixture(autouse=True)
def _outbound_allows_test_sites(settings):
    """The fixture sites on 127.0.0.1 are reachable in tests (settings were read before this file set the variable)."""
    from fetch.addresses import parse_networks

    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks(os.environ["OUTBOUND_ALLOWED_NETWORKS"])


@pytest.fixture
def no_outbound_allowance(settings):
    """The production default: no loopback, private or link-local target is allowed."""
    settings.OUTBOUND_ALLOWED_NETWORKS = ()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """API throttles and remembered credentials live in caches: each test starts without them."""
    from django.core.cache import cache

    from accounts import remembered

    cache.clear()
    remembered.forget_all()


@pytest.fixture(autouse=True)
def _fresh_limiter_memory():
    """The limiter keeps idle slot rows and busy marks per process: each test starts without them."""
    from crawler.politeness.limiter import IDLE_SLOTS
    from crawler.politeness.slots import BUSY, HELD_TOKENS

    IDLE_SLOTS.forget()
    BUSY.forget()
    HELD_TOKENS.forget()


@pytest.fixture
def alice_client(alice) -> APIClient:
    client = APIClient()
    client.force_authenticate(alice)
    return client


@pytest.fixture
def staff_client(staff) -> APIClient:
    client = APIClient()
    client.force_authenticate(staff)
    return client


@pytest.fixture
def child_env(settings, tmp_path) -> dict[str, str]:
    """Environment for a `manage.py` child process that must see this test's database and media."""
    env = dict(os.environ)
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = (
            f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
    else:
        env.pop("DATABASE_URL", None)
        env["MANGALORD_DATA_DIR"] = os.path.dirname(db["NAME"])
    env["MEDIA_ROOT"] = str(settings.MEDIA_ROOT)
    env["PYTHONPATH"] = REPO_ROOT
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def manage_cmd() -> list[str]:
    return [sys.executable, os.path.join(REPO_ROOT, "manage.py")]


@pytest.fixture(autouse=True)
def _isolated_media(settings, tmp_path):
    """Every test stores files under its own temporary MEDIA_ROOT."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    os.makedirs(settings.MEDIA_ROOT, exist_ok=True)


@pytest.fixture
def migrator():
    """Migrate to the given nodes (`(app, None)` unapplies an app) and return their state's apps.

    Every app goes back to its latest migration afterwards.
    """
    from django.contrib.contenttypes.models import ContentType
    from django.db.migrations.executor import MigrationExecutor

    def migrate(targets):
        executor = MigrationExecutor(connection)
        executor.migrate(targets)
        executor.loader.build_graph()
        return executor.loader.project_state([t for t in targets if t[1] is not None]).apps

    yield migrate
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()
