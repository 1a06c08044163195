"""The admin is composed, never re-registered: each app registers its own models' admins once, in its own
`admin.py`; the console adds its actions and columns to them, and an operator sees them whatever the app order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from analysis.models import PageAnalysis
from crawler.models import SourceThrottle
from crawler.payloads import MetadataPass
from jobs.models import WorkerStatus
from testsupport import api_factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

OUR_APPS = ("accounts", "catalog", "jobs", "crawler", "analysis", "console", "reader", "mangalord")
# accounts replaces the admins Django (auth) and Django REST framework (authtoken) register for their own
# models: that is how Django customises them, and neither is an app of ours.
REPLACED_THIRD_PARTY = {"User", "TokenProxy"}

# Each composed changelist, a row for it, and the console's actions an operator must find there.
PAGES = {
    "catalog/manga": (lambda w: w["manga"], {"requeue_chapters"}),
    "catalog/chapter": (lambda w: w["chapter"], {"requeue_chapters"}),
    "catalog/source": (lambda w: w["source"], {"download_all", "download_followed"}),
    "jobs/job": (lambda w: w["job"], {"requeue_dead", "release", "force_analyze"}),
    "jobs/workerstatus": (lambda w: w["worker"], set()),
    "analysis/pageanalysis": (lambda w: w["analysis"], {"force_analyze"}),
    "crawler/sourcethrottle": (lambda w: w["throttle"], {"end_cooldown"}),
}
CONSOLE_ACTIONS = set().union(*(wanted for _, wanted in PAGES.values()))


def _unregistered_names(path: Path) -> list[str]:
    """The names passed to every `….unregister(…)` call in a module."""
    calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
    return [
        ast.unparse(arg)
        for call in calls
        if isinstance(call.func, ast.Attribute) and call.func.attr == "unregister"
        for arg in call.args
    ]


def test_no_app_unregisters_an_admin_of_ours():
    root = Path(settings.BASE_DIR)
    modules = [p for app in OUR_APPS for p in (root / app).rglob("*.py") if "tests" not in p.parts]
    unregistered = {name for path in modules for name in _unregistered_names(path)}
    assert unregistered <= REPLACED_THIRD_PARTY, unregistered


def test_each_of_our_models_is_registered_by_its_own_app():
    ours = {
        model._meta.label: type(model_admin).__module__
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_config.name in OUR_APPS and type(model_admin) is not admin.ModelAdmin  # a plain one: Tag
    }
    assert {
        label: module
        for label, module in ours.items()
        if module != f"{label.split('.')[0]}.admin" and not module.startswith(f"{label.split('.')[0]}.admin.")
    } == {}
    assert {"catalog.Manga", "jobs.Job", "jobs.WorkerStatus", "analysis.PageAnalysis"} <= set(ours)


@pytest.fixture
def rows(db):
    src = f.source("demo")
    manga = f.manga("Berserk", src=src)
    chapter = f.chapter(manga, 1, src=src)
    page = f.page(chapter)
    return {
        "source": src,
        "manga": manga,
        "chapter": chapter,
        "job": f.job(MetadataPass(source_id="demo")),
        "worker": WorkerStatus.objects.create(role="crawl", host="box", pid=7, heartbeat_at=timezone.now()),
        "analysis": PageAnalysis.objects.create(page=page, state=PageAnalysis.State.DONE, tags=[]),
        "throttle": SourceThrottle.objects.create(source_id="demo"),
    }


@pytest.fixture
def viewer(django_user_model):
    """Staff who may view every one of these tables, without the operator permission."""
    user = django_user_model.objects.create_user("vera", "vera@example.com", "vera-password", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _actions(response) -> set[str]:
    return {name for name, _ in response.context["action_form"].fields["action"].choices if name}


@pytest.mark.parametrize("page", PAGES)
def test_the_composed_pages_render_with_the_console_actions(staff, rows, page):
    client = _client(staff)
    row, wanted = PAGES[page]
    listing = client.get(f"/admin/{page}/")
    assert listing.status_code == 200
    assert wanted <= _actions(listing)
    change = client.get(f"/admin/{page}/{row(rows).pk}/change/")
    assert change.status_code == 200


@pytest.mark.parametrize("page", PAGES)
def test_staff_without_the_operator_permission_see_the_pages_without_the_actions(viewer, rows, page):
    client = _client(viewer)
    row, _ = PAGES[page]
    listing = client.get(f"/admin/{page}/")
    assert listing.status_code == 200
    assert not (_actions(listing) if listing.context.get("action_form") else set()) & CONSOLE_ACTIONS
    assert client.get(f"/admin/{page}/{row(rows).pk}/change/").status_code == 200


def test_the_console_columns_search_and_source_editor_are_in_place(staff, viewer, rows):
    client = _client(staff)
    jobs = client.get("/admin/jobs/job/").content.decode()
    assert ">Label<" in jobs and "Payload title (sync_manga), manga title, or job id." in jobs
    assert ">Download<" in client.get("/admin/catalog/source/").content.decode()
    # An operator edits a source (the id is fixed once made); a viewer sees it read-only.
    assert 'name="base_url"' in client.get("/admin/catalog/source/demo/change/").content.decode()
    assert 'name="base_url"' not in _client(viewer).get("/admin/catalog/source/demo/change/").content.decode()


def test_installing_the_console_again_adds_nothing_twice():
    """`ready()` may run twice (an app registry reloaded in tests): the extensions stay as they were."""
    from console import admin as console_admin
    from jobs.admin import JobAdmin

    before = (list(JobAdmin.extra_actions), list(JobAdmin.extra_columns), list(JobAdmin.extra_searches))
    console_admin.install()
    assert (JobAdmin.extra_actions, JobAdmin.extra_columns, JobAdmin.extra_searches) == before
    assert [a.__name__ for a in JobAdmin.extra_actions] == ["requeue_dead", "release", "force_analyze"]
