"""Two real crawl worker processes meet the challenged Madara stand-in at once: one passes it, both crawl with it.

The pass lives in PostgreSQL, so the worker that did not pass takes the one
in flight (or stored) instead of starting its own Chromium for it.
"""

from __future__ import annotations

import pytest

from catalog.models import Chapter, Source
from crawler.models import SourceClearance
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState
from testsupport.challenge_site import ChallengedMadaraSite
from testsupport.theme_sites.expect import LOCAL_PACE, check_full_crawl, madara_key
from testsupport.worker_processes import wait_until, worker_pool

pytestmark = [pytest.mark.process, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path, settings):
    env = {**child_env, "CHROMIUM_PATH": settings.CHROMIUM_PATH or "/usr/bin/chromium"}
    yield from worker_pool(env, manage_cmd, tmp_path)


def test_two_worker_processes_crawl_a_challenged_site_with_one_pass_between_them(workers):
    site = ChallengedMadaraSite()
    try:
        row = Source.objects.create(
            id="shielded", name="Shielded", base_url=site.base_url, settings={"preset": "madara", **LOCAL_PACE}
        )
        queue.enqueue(MetadataPass(source_id=row.id))
        running = [workers.start(JOBS_WORKERS="2") for _ in range(2)]
        expected = sum(len(m.chapters) for m in site.catalog)

        def finished() -> bool:
            done = Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count() == expected
            return done and not Job.objects.exclude(state__in=[JobState.DONE, JobState.DEAD]).exists()

        wait_until(finished, timeout=180, what="the whole challenged catalog")
        for worker in running:
            assert worker.terminate() == 0
        check_full_crawl(row, site.catalog, madara_key, relative_dates=True)
        clearance = SourceClearance.objects.get(source_id="shielded")
        assert (clearance.passes, clearance.via) == (1, "browser")
        assert set(site.cleared_agents()) == {clearance.user_agent}
        # One pass for the two processes: one of them launched Chromium, the other took the stored pass.
        assert "passed a cloudflare JavaScript challenge" in workers.logs()
        assert workers.logs().count("browser: launched Chromium") == 1
    finally:
        site.stop()
