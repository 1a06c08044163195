"""Several hosts on one machine: every process started as docs/install.md#running-on-several-hosts says.

PostgreSQL (this test's database), a real PgBouncer in transaction mode, an
S3-protocol server, Redis on 127.0.0.1:6379, `manage.py migrate` straight at
PostgreSQL, the web process under Daphne and two crawl workers, each started
with exactly the settings that page's table gives its host. A demo source is
added and its metadata pass enqueued with `manage.py metadata_pass --enqueue`;
from then on the test looks only at what the processes show outside: the demo
site's request log, the bucket, the workers' logs, the rows in the database and
the web process's HTTP API.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count

from catalog.models import Chapter, Manga, Page, Source
from conftest import REPO_ROOT
from jobs.models import Job, JobState, WorkerStatus
from testsupport.live_server import LiveServer, start_daphne
from testsupport.worker_processes import WorkerProcesses, wait_until

pytestmark = [
    pytest.mark.process,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PgBouncer pools PostgreSQL"),
]

REDIS_URL = "redis://127.0.0.1:6379/0"
OPERATOR, PASSWORD = "operator", "operator-password-for-the-test"
JOB_DONE = re.compile(r"job done job=(\S+) kind=\S+")


@dataclass
class Hosts:
    """The environment of each kind of host, as the settings table of docs/install.md#running-on-several-hosts gives it."""

    migrate: dict[str, str]
    web: dict[str, str]
    worker: dict[str, str]


@pytest.fixture
def redis_url() -> str:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        pytest.skip("needs Redis on 127.0.0.1:6379")
    return REDIS_URL


@pytest.fixture
def hosts(child_env, pgbouncer, s3_bucket, redis_url, tmp_path) -> Hosts:
    db = connection.settings_dict
    direct = child_env["DATABASE_URL"]
    base = {k: v for k, v in child_env.items() if not k.startswith(("DATABASE_", "S3_", "REDIS_", "STORAGE_"))}
    # Every host shares one key; the data directory is checked for stray files at the end.
    base.update(
        SECRET_KEY=secrets.token_urlsafe(50), MANGALORD_DATA_DIR=str(tmp_path / "data"), ANALYSIS_ENABLED="false"
    )
    pooled = {
        "DATABASE_URL": pgbouncer.url(db["NAME"], db["USER"] or "postgres"),
        "DATABASE_POOLER": "pgbouncer",
        "DATABASE_DIRECT_URL": direct,
        **s3_bucket.env(),
        "REDIS_URL": redis_url,
    }
    return Hosts(
        migrate={**base, "DATABASE_URL": direct, "DATABASE_POOLER": ""},
        web={**base, **pooled, "ALLOWED_HOSTS": "127.0.0.1"},
        worker={**base, **pooled},
    )


def manage(env: dict[str, str], manage_cmd: list[str], *args: str, **extra: str) -> str:
    """A one-shot `manage.py` command (what an operator types on one host); its output."""
    result = subprocess.run(
        [*manage_cmd, *args], env={**env, **extra}, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture
def web(hosts) -> Iterator[LiveServer]:
    server = start_daphne(hosts.web, cwd=REPO_ROOT)
    try:
        yield server
    finally:
        server.stop()
        print(f"--- daphne log ---\n{server.log()}")  # shown by pytest only when the test failed


@pytest.fixture
def crawl_workers(hosts, manage_cmd, tmp_path) -> Iterator[WorkerProcesses]:
    processes = WorkerProcesses(hosts.worker, manage_cmd, tmp_path, schedule=True)
    try:
        yield processes
    finally:
        processes.cleanup()
        print(processes.logs())


def files_under(path: str | Path) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(path) for f in files]


def test_web_and_two_crawl_workers_on_pgbouncer_s3_and_redis_crawl_the_demo_once_and_serve_it_from_the_bucket(
    hosts, manage_cmd, web, crawl_workers, demo_site_factory, s3_bucket, tmp_path
):
    # Once per release, straight at PostgreSQL: pytest-django migrated already, so nothing to apply.
    assert "No migrations to apply." in manage(hosts.migrate, manage_cmd, "migrate", "--noinput")
    workers = [crawl_workers.start(), crawl_workers.start()]
    for worker in workers:
        worker.wait_ready()
    manage(
        hosts.web,
        manage_cmd,
        "createsuperuser",
        "--noinput",
        f"--username={OPERATOR}",
        "--email=operator@example.com",
        DJANGO_SUPERUSER_PASSWORD=PASSWORD,
    )

    site = demo_site_factory(mangas=4, chapters=(2, 3), pages=(2, 3))
    site.faults.slow_secs = 0.05  # a job lasts long enough that one worker cannot take them all
    Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    assert manage(hosts.worker, manage_cmd, "metadata_pass", "--enqueue").strip() == "metadata pass demo: enqueued"

    chapters = [c for m in site.catalog for c in m.chapters]
    wait_until(
        lambda: Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count() == len(chapters)
        and not Job.objects.exclude(state=JobState.DONE).exists(),
        timeout=40,
        what="the crawl to drain",
    )

    # Every page of the demo site fetched exactly once, and stored once.
    page_paths = [f"/img/pages/{c.key}/{i}.{c.page_format(i)}" for c in chapters for i in range(1, c.pages + 1)]
    assert Counter(r.path for r in site.hits("/img/pages/")) == Counter(page_paths)
    stored = dict(Chapter.objects.annotate(n=Count("pages")).values_list("source_chapter_key", "n"))
    assert stored == {c.key: c.pages for c in chapters}
    dedup_keys = Counter(Job.objects.exclude(dedup_key=None).values_list("dedup_key", flat=True))
    assert [key for key, n in dedup_keys.items() if n > 1] == []

    # Covers and pages are in the bucket, nothing on this host's disk.
    keys = s3_bucket.keys()
    assert len([k for k in keys if k.startswith("media/pages/")]) == Page.objects.count() == len(page_paths)
    assert len([k for k in keys if k.startswith("media/covers/")]) == Manga.objects.count() == len(site.catalog)
    assert s3_bucket.pending_uploads() == []
    assert files_under(settings.MEDIA_ROOT) == files_under(tmp_path / "data") == []

    with httpx.Client(base_url=web.url, timeout=20) as http:
        token = http.post("/api/v1/auth/token/", json={"username": OPERATOR, "password": PASSWORD})
        assert token.status_code == 200, token.text
        http.headers["Authorization"] = f"Token {token.json()['token']}"

        # The web process streams each page from the bucket: the bytes the source served.
        for page in Page.objects.select_related("chapter"):
            key = page.chapter.source_chapter_key
            demo = next(c for c in chapters if c.key == key)
            original = httpx.get(site.url(f"/img/pages/{key}/{page.index + 1}.{demo.page_format(page.index + 1)}"))
            served = http.get(f"/api/v1/pages/{page.id}/image/")
            assert served.status_code == 200
            assert served.content == original.content

        status = http.get("/api/v1/admin/crawler/")
        assert status.status_code == 200, status.text
        shown = {(w["pid"], w["state"]) for w in status.json()["workers"] if w["role"] == "crawl"}
        assert shown == {(w.pid, "live") for w in workers}

    for process in [web.process, *(w.process for w in workers)]:
        process.send_signal(signal.SIGTERM)
    assert [p.wait(15) for p in [web.process, *(w.process for w in workers)]] == [0, 0, 0]

    # Both workers did jobs, no job was done by both, and every job was done by one of them.
    done_by = [set(JOB_DONE.findall(w.log())) for w in workers]
    assert all(done_by), [len(jobs) for jobs in done_by]
    assert done_by[0].isdisjoint(done_by[1])
    assert done_by[0] | done_by[1] == {str(i) for i in Job.objects.values_list("id", flat=True)}
    rows = WorkerStatus.objects.filter(pid__in=[w.pid for w in workers])
    assert sorted(rows.values_list("role", flat=True)) == ["crawl", "crawl"]
    assert not rows.filter(stopped_at=None).exists()
    assert not any("channel layer failed" in w.log() for w in workers)  # Redis took every status signal
    print(
        f"\nseveral hosts figures: jobs={len(done_by[0]) + len(done_by[1])} per_worker={[len(j) for j in done_by]} "
        f"chapters={len(chapters)} pages={len(page_paths)} objects={len(keys)}"
    )
