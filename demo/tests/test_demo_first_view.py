"""`manage.py demo` serves the library before the analysis has finished, which then completes in the background.

The first view must not wait for page analysis: the reader's library page
answers while pages are still being analysed, the dashboard's status shows the
analyze worker's count moving, the analysis completes beside the server, and
Ctrl-C stops both cleanly. Every log line goes to the file the demo names,
none to the console.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import REPO_ROOT
from demo.tests.conftest import demo_rows
from testsupport.ports import free_port

pytestmark = [pytest.mark.process, pytest.mark.sqlite_ok, pytest.mark.django_db(transaction=True)]

PASSWORD = "first-view-password"
ANALYSED = "SELECT COUNT(*) FROM analysis_pageanalysis WHERE state IN ('done', 'failed')"
PAGES = "SELECT COUNT(*) FROM catalog_page"
WAITING = "SELECT COUNT(*) FROM crawler_jobs WHERE kind = 'analyze_page' AND state IN ('pending', 'running')"


def wait_for(what: str, check: Callable[[], Any], timeout: float, proc: subprocess.Popen[str]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"demo exited ({proc.returncode}) while waiting for {what}"
        found = check()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def signed_in(base: str) -> httpx.Client | None:
    """A client signed in to the reader as the demo's admin, or None while the server is not up yet."""
    client = httpx.Client(base_url=base, timeout=10)
    try:
        client.get("/login/")
        token = client.cookies.get("csrftoken")
        form = {"username": "demo-admin", "password": PASSWORD, "csrfmiddlewaretoken": token}
        client.post("/login/", data=form, headers={"Referer": f"{base}/login/"})
        if client.get("/").status_code == 200:
            return client
    except httpx.TransportError:
        pass
    client.close()
    return None


@pytest.fixture
def serving_demo(demo_env, manage_cmd, tmp_path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """`manage.py demo` serving a 3-manga library on a free port; its console output is written to a file."""
    port = free_port()
    console = tmp_path / "console.txt"
    with console.open("w") as out:
        proc = subprocess.Popen(
            [*manage_cmd, "demo", "--mangas", "3", "--port", str(port)],
            env={**demo_env, "DEMO_ADMIN_PASSWORD": PASSWORD},
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        yield proc, f"http://127.0.0.1:{port}", console
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_the_library_answers_before_the_analysis_ends_which_then_completes_in_the_background(demo_env, serving_demo):
    proc, base, console = serving_demo

    client = wait_for("the signed-in library page", lambda: signed_in(base), 180, proc)
    analysed, pages = demo_rows(demo_env, ANALYSED, PAGES)
    assert 0 < pages and analysed < pages  # served while analysis still had pages to go

    try:
        wait_for("every page analysed", lambda: demo_rows(demo_env, WAITING, ANALYSED) == (0, pages), 300, proc)

        def analyze_worker_count() -> Any:
            workers = client.get("/api/v1/admin/crawler/").json()["workers"]
            phases = [w["phase"] for w in workers if w["role"] == "analyze" and w["state"] == "live"]
            return phases and phases[0].get("analysed") == pages and phases[0]

        phase = wait_for("the dashboard's count of analysed pages", analyze_worker_count, 30, proc)
        assert phase == {"state": "analysing", "analysed": pages, "failed": 0}
    finally:
        client.close()

    finished = rf"Analysis finished: {pages} pages analysed, 0 failed"
    wait_for("the console's last word on the analysis", lambda: re.search(finished, console.read_text()), 30, proc)
    proc.send_signal(signal.SIGINT)
    # Stopping hands each worker's in-flight job back (up to 15 s a worker when a page is mid-analysis); on a
    # loaded machine with SQLite's writers queued behind each other that takes longer than it does alone.
    assert proc.wait(120) == 0, console.read_text()
    out = console.read_text()
    assert "level=" not in out  # no log line over the bars
    log_path = re.search(r"^Log +(\S+)$", out, re.MULTILINE)
    assert log_path, out
    log = Path(log_path.group(1)).read_text()
    assert "logger=analysis.handlers" in log and "Listening at" in log  # the web process's own lines too
    assert log.index("Listening at") < log.rindex("analyze_page: page")
