"""The import contract in pyproject.toml holds, and a back-import breaks it (what `lint-imports` in CI checks)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
APPS = (
    "mangalord",
    "demo",
    "accounts",
    "listing",
    "catalog",
    "jobs",
    "fetch",
    "sources",
    "crawler",
    "analysis",
    "console",
    "reader",
    "upkeep",
    "notify",
)
# Every root package the contracts name must be there for lint-imports to run.
PACKAGES = (*APPS, "testsupport")

pytestmark = pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is a dev requirement")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["lint-imports", "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_the_contract(tree_copy):
    result = lint_imports(tree_copy)
    assert result.returncode == 0, result.stdout
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "back_import", "complaint"),
    [
        (
            "catalog/models.py",
            "from testsupport.ports import free_port",
            "catalog is not allowed to import testsupport",
        ),
        (
            "catalog/bookmarks.py",
            "from crawler.passes.chapters import enqueue_chapter_content",
            "catalog is not allowed to import crawler",
        ),
        (
            "crawler/passes/chapter_download.py",
            "from analysis.service import enqueue_for_page",
            "crawler is not allowed to import analysis",
        ),
        (
            "reader/cbz.py",
            "from sources.config import SourceSettings",
            "reader is not allowed to import sources",
        ),
        (
            "accounts/policy.py",
            "from catalog.models import Manga",
            "accounts is not allowed to import catalog",
        ),
        (
            "catalog/models.py",
            "from reader.models import ReadProgress",
            "catalog is not allowed to import reader",
        ),
        (
            "jobs/queue.py",
            "from jobs.worker import circuit",
            "jobs.queue is not allowed to import jobs.worker",
        ),
        (
            "jobs/worker/loop.py",
            "from sources.errors import SessionExpired",
            "jobs is not allowed to import sources",
        ),
        (
            "sources/html.py",
            "from crawler.politeness.limiter import SourceLimiter",
            "sources is not allowed to import crawler",
        ),
        (
            "fetch/pages.py",
            "from sources.hosts import parse_host_rule",
            "fetch is not allowed to import sources",
        ),
        (
            "jobs/kinds.py",
            "from analysis.payloads import AnalyzePage",
            "jobs is not allowed to import analysis",
        ),
        (
            "crawler/state_store.py",
            "from console.dashboard.broadcaster import get_broadcaster",
            "crawler is not allowed to import console",
        ),
        (
            "analysis/service.py",
            "from console.control.errors import ControlError",
            "analysis is not allowed to import console",
        ),
        (
            "console/control/actions.py",
            "from console.api.control import ERRORS",
            "console.control is not allowed to import console.api",
        ),
        (
            "jobs/worker/status/publish.py",
            "from crawler.workers.handlers import JobContext",
            "jobs is not allowed to import crawler",
        ),
        (
            "crawler/passes/chapter_download.py",
            "from notify.receivers import record_ready_chapter",
            "crawler is not allowed to import notify",
        ),
        (
            "console/status/compose.py",
            "from notify.health.alerts import check_health",
            "console is not allowed to import notify",
        ),
        (
            "notify/digests/passes.py",
            "from crawler import state_store",
            "notify is not allowed to import crawler",
        ),
        (
            "jobs/guards.py",
            "from jobs import queue",
            "No import cycles within jobs BROKEN",
        ),
        (
            "jobs/guards.py",
            "from jobs.worker import circuit",
            "jobs.guards is not allowed to import jobs.worker",
        ),
    ],
)
def test_a_back_import_breaks_the_contract(tree_copy, module, back_import, complaint):
    path = tree_copy / module
    path.write_text(path.read_text() + f"\n{back_import}  # noqa\n")
    result = lint_imports(tree_copy)
    assert result.returncode != 0
    assert complaint in result.stdout
