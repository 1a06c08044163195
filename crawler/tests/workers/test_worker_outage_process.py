"""A crawl worker behind a real PgBouncer rides out the pooler's death and its connections being terminated.

Mid-crawl the PgBouncer the worker talks through is killed with SIGKILL and
restarted on the same port a few seconds later, and every PostgreSQL session
of the worker (its LISTEN session on the direct URL, the pooler's server
sessions) is ended with `pg_terminate_backend`. Meanwhile its status row,
written around the pooler, says since when its database is unavailable. The
worker must not exit,
the crawl must finish with every page stored exactly once (one row per
page, one file per row, no file left over) and every job done exactly once.
Then the pooler is killed again and the worker, idle in the outage, is
stopped: it exits 0 within seconds.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count

from catalog.models import Chapter, Page, Source
from console.status.compose import compose_status
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState, WorkerStatus
from testsupport.pgbouncer import start_pgbouncer
from testsupport.worker_processes import wait_until, worker_pool

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]

OUTAGE_SECS = 3.0


@pytest.fixture
def bouncer(db):
    if connection.vendor != "postgresql":
        pytest.skip("PgBouncer pools PostgreSQL connections")
    db_settings = connection.settings_dict
    started = start_pgbouncer(
        server_host=db_settings["HOST"] or "127.0.0.1", server_port=int(db_settings["PORT"] or 5432)
    )
    yield started
    started.stop()


@pytest.fixture
def workers(child_env, bouncer, manage_cmd, tmp_path, settings):
    settings.ANALYSIS_ENABLED = False
    name = connection.settings_dict["NAME"]
    env = dict(
        child_env,
        DATABASE_URL=bouncer.url(name),
        DATABASE_POOLER="pgbouncer",
        DATABASE_DIRECT_URL=child_env["DATABASE_URL"],  # LISTEN around the pooler, straight at PostgreSQL
    )
    yield from worker_pool(env, manage_cmd, tmp_path)


def _terminate_other_sessions() -> int:
    """End every session on the test database but this test's own (the worker's, the pooler's)."""
    with psycopg.connect(_direct_url(), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %s",
            [connection.connection.info.backend_pid if connection.connection else 0],
        ).fetchall()
    return len(rows)


def _direct_url() -> str:
    db = connection.settings_dict
    return f"postgresql://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def test_worker_rides_out_a_pooler_crash_and_terminated_sessions_storing_every_page_once(
    demo_site_factory, bouncer, workers
):
    site = demo_site_factory(mangas=4, chapters=(2, 2), pages=(6, 6))
    site.faults.slow_secs = 0.08  # a crawl of several seconds, so the outage lands in the middle of it
    Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    queue.enqueue(MetadataPass(source_id="demo"))
    expected = {c.key: c.pages for m in site.catalog for c in m.chapters}

    worker = workers.start(JOBS_WORKERS="2")
    worker.wait_ready()
    wait_until(lambda: Page.objects.count() >= 6, timeout=60, what="the crawl to store its first pages")

    # 1. The pooler dies mid-crawl and comes back on the same port.
    stored_before = Page.objects.count()
    outage_started = time.monotonic()
    bouncer.kill9()
    terminated = _terminate_other_sessions()  # the LISTEN session too
    # Its status row, written around the dead pooler, and the dashboard's status say since when.
    unavailable = wait_until(
        lambda: compose_status(counts={})["database_unavailable"], timeout=OUTAGE_SECS, what="the status to say so"
    )
    time.sleep(max(0.0, OUTAGE_SECS - (time.monotonic() - outage_started)))
    assert worker.process.poll() is None, "the worker exited during the outage"
    bouncer.restart()
    outage_secs = time.monotonic() - outage_started

    # 2. Later, its sessions are terminated again while it crawls.
    wait_until(lambda: Page.objects.count() >= stored_before + 6, timeout=60, what="the crawl to resume")
    terminated += _terminate_other_sessions()

    def all_done() -> bool:
        return (
            Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count() == len(expected)
            and not Job.objects.exclude(state=JobState.DONE).exists()
        )

    wait_until(all_done, timeout=90, what="the crawl to finish after the outage")
    assert worker.process.poll() is None, "the worker exited"
    assert unavailable[0]["worker"].endswith(f":{worker.pid}") and unavailable[0]["state"] == "live"
    assert not WorkerStatus.objects.get(pid=worker.pid, stopped_at__isnull=True).flags.get("database_unavailable_since")
    log = worker.log()
    assert "database unavailable since" in log
    assert "database available again" in log

    # 3. A stop during an outage still exits, at once and cleanly.
    bouncer.kill9()
    wait_until(
        lambda: worker.log().count("database unavailable since") >= 2, timeout=30, what="the idle worker to notice"
    )
    stop_started = time.monotonic()
    worker.process.send_signal(signal.SIGTERM)
    exit_code = worker.wait(15)
    stop_secs = time.monotonic() - stop_started
    bouncer.restart()

    stored = dict(Chapter.objects.annotate(n=Count("pages")).values_list("source_chapter_key", "n"))
    duplicates = Page.objects.values("chapter", "index").annotate(n=Count("id")).filter(n__gt=1).count()
    files = {
        str(p.relative_to(settings.MEDIA_ROOT)) for p in Path(settings.MEDIA_ROOT, "pages").rglob("*") if p.is_file()
    }
    rows = set(Page.objects.values_list("image", flat=True))
    jobs = list(Job.objects.values_list("dedup_key", "state"))
    image_fetches = sum(1 for r in site.requests if r.path.startswith("/img/pages/"))
    print(
        f"\noutage figures: pooler down {outage_secs:.1f} s, sessions terminated {terminated}, "
        f"pages expected {sum(expected.values())} stored {len(rows)} image fetches {image_fetches}, "
        f"duplicates {duplicates}, worker exit code {exit_code} after SIGTERM in the outage ({stop_secs:.1f} s)"
    )
    assert {key: stored.get(key) for key in expected} == expected
    assert duplicates == 0
    assert files == rows
    assert [key for key, state in jobs if state != JobState.DONE] == []
    assert [key for key, n in Counter(key for key, _ in jobs).items() if n > 1] == []
    assert exit_code == 0
    assert stop_secs < 10
