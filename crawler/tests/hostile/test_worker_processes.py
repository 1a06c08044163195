"""A real crawl worker against hostile sources: an inside address dies at once, a 300 MiB page costs the cap.

The worker runs with the production rule (no allowance) for the first test,
and with the suite's 127.0.0.1 allowance for the second, whose site is
reachable but hostile. Its peak resident memory is read from
/proc/<pid>/status (VmHWM) before and after the job.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.models import Source
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState
from testsupport.http_server import serving
from testsupport.worker_processes import wait_until, worker_pool

from .test_bounded_reads import _Huge

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]

MiB = 1024 * 1024


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    yield from worker_pool(child_env, manage_cmd, tmp_path)


def _pass_of(source_id: str, base_url: str) -> Job:
    Source.objects.create(
        id=source_id, name=source_id, kind=Source.Kind.HTML, base_url=base_url, settings={"preset": "madara"}
    )
    # Enqueued as a running worker would see it (the factory's state update would race the worker's lease).
    result = queue.enqueue(MetadataPass(source_id=source_id))
    return Job.objects.get(id=result.id)


def _settled(job: Job) -> Job | None:
    row = Job.objects.get(id=job.id)
    return row if row.state in (JobState.DEAD, JobState.DONE) else None


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


def test_a_crawl_worker_dead_letters_a_source_on_a_loopback_address_at_once_and_sends_nothing(canary, workers):
    job = _pass_of("inside", canary.url)
    worker = workers.start(OUTBOUND_ALLOWED_NETWORKS="")
    row = wait_until(lambda: _settled(job), timeout=60, what="the metadata pass to settle")
    assert row.state == JobState.DEAD and row.attempts == 1  # permanent: no retries against the canary
    assert "127.0.0.1 is a loopback address; OUTBOUND_ALLOWED_NETWORKS allows private targets" in row.last_error
    assert canary.hits == []
    assert worker.terminate() == 0


def test_a_crawl_worker_refuses_a_300_mib_list_page_at_the_cap_with_bounded_memory(workers):
    cap = 8 * MiB
    with serving(_Huge) as site:
        worker = workers.start(CRAWLER_MAX_PAGE_BYTES=str(cap))
        worker.wait_ready()
        before = _peak_rss(worker.pid)
        job = _pass_of("huge", site)
        row = wait_until(lambda: _settled(job), timeout=60, what="the metadata pass to settle")
        grown = _peak_rss(worker.pid) - before
    assert row.state == JobState.DEAD and row.attempts == 1
    assert f"is larger than the page cap of {cap} bytes (CRAWLER_MAX_PAGE_BYTES)" in row.last_error
    assert grown < 6 * cap, f"the worker's peak RSS grew {grown / MiB:.1f} MiB for a cap of {cap / MiB:.0f} MiB"
    assert worker.terminate() == 0
