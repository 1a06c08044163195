"""Chaos: several crawl worker processes, random kill -9s and restarts, the whole demo catalog.

The metadata pass itself runs as a job, so a kill can land in the pass, in a
manga sync or in the middle of a chapter. At the end every chapter must be
complete, every job done exactly once (nothing lost, nothing run to done
twice), no page stored twice and no file left behind. It runs straight at
PostgreSQL and through PgBouncer in transaction mode with no LISTEN session
(the workers' polling fallback).
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Count

from catalog.models import Chapter, Manga, Page, Source
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState
from testsupport.worker_processes import wait_until, worker_pool

pytestmark = [
    pytest.mark.process,
    pytest.mark.django_db(transaction=True),
    pytest.mark.parametrize("db_route", ["direct", "pgbouncer"], indirect=True),
]


@pytest.fixture
def workers(routed_child_env, manage_cmd, tmp_path):
    yield from worker_pool(routed_child_env, manage_cmd, tmp_path)


WORKERS = 3
CHAOS_SECS = 20.0
KILL_EVERY_SECS = (1.0, 3.0)


def test_random_kills_during_a_full_crawl_lose_nothing_and_duplicate_nothing(
    demo_site_factory, settings_override, workers
):
    seed = random.randrange(1_000_000)
    rng = random.Random(seed)
    site = demo_site_factory(mangas=8, chapters=(2, 3), pages=(3, 5))
    site.faults.slow_secs = 0.05  # long enough that kills land mid-chapter
    Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    queue.enqueue(MetadataPass(source_id="demo"))

    env = {"JOBS_WORKERS": "2"}
    running = [workers.start(**env) for _ in range(WORKERS)]
    kills = 0
    started = time.monotonic()
    while time.monotonic() - started < CHAOS_SECS:
        time.sleep(rng.uniform(*KILL_EVERY_SECS))
        victim = running.pop(rng.randrange(len(running)))
        victim.kill9()
        kills += 1
        running.append(workers.start(**env))

    expected = {c.key: c.pages for m in site.catalog for c in m.chapters}

    def all_done() -> bool:
        return (
            Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count() == len(expected)
            and not Job.objects.exclude(state=JobState.DONE).exists()
        )

    wait_until(all_done, timeout=120, what="the crawl to finish after the chaos")
    for worker in running:
        assert worker.process.poll() is None, "a surviving worker crashed"
        worker.wait_ready()
        worker.process.send_signal(signal.SIGTERM)
    assert [w.wait(20) for w in running] == [0] * len(running)

    # Every chapter of the catalog is stored with exactly its pages.
    stored = dict(Chapter.objects.annotate(n=Count("pages")).values_list("source_chapter_key", "n"))
    incomplete = {key for key, pages in expected.items() if stored.get(key) != pages}
    # No job lost: every job done; none run to done twice for the same work.
    jobs = list(Job.objects.values_list("dedup_key", "state"))
    not_done = [key for key, state in jobs if state != JobState.DONE]
    done_twice = [key for key, n in Counter(key for key, _ in jobs).items() if n > 1]
    # No page stored twice, no file without its row (or row without its file).
    duplicate_pages = Page.objects.values("chapter", "index").annotate(n=Count("id")).filter(n__gt=1).count()
    files = {
        str(p.relative_to(settings.MEDIA_ROOT)) for p in Path(settings.MEDIA_ROOT, "pages").rglob("*") if p.is_file()
    }
    rows = set(Page.objects.values_list("image", flat=True))

    print(
        f"\nchaos figures: seed={seed} workers={WORKERS} kills={kills} jobs={len(jobs)} "
        f"mangas={Manga.objects.count()} chapters={len(expected)} pages={len(rows)} "
        f"lost={len(not_done) + len(incomplete)} run_twice={len(done_twice)} duplicates={duplicate_pages} "
        f"orphan_files={len(files - rows)} missing_files={len(rows - files)}"
    )
    assert kills >= 5
    assert incomplete == set()
    assert not_done == []
    assert done_twice == []
    assert duplicate_pages == 0
    assert files == rows


@pytest.fixture
def settings_override(settings):
    settings.ANALYSIS_ENABLED = False
    return settings
