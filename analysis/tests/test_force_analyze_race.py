"""The force-analyze race, end to end on real threads, connections and HTTP.

Worker A leases a page and is mid-request to the vision endpoint when an
operator force-analyzes the page: `enqueue_for_page(force=True)` releases A's
lease. Worker B re-leases the job and finishes. When A's request finally
returns, neither A's result (or failure) nor A's ack may clobber B's.
"""

from __future__ import annotations

import threading

import pytest

from analysis.models import PageAnalysis
from analysis.service import EnqueueForPageOutcome, enqueue_for_page
from analysis.tests.helpers import lease_one, run_and_settle, run_handler
from jobs import queue, retry
from jobs.models import Job, JobState
from testsupport.vision_standin import Reply, completion

pytestmark = pytest.mark.django_db(transaction=True)


def _start_worker_a(lease) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def worker_a() -> None:
        from django.db import connection

        try:
            outcome["error"] = run_handler(lease)
            outcome["acked"] = queue.ack_done(lease) if outcome["error"] is None else retry.ack_failed(lease, "late")
        finally:
            connection.close()

    thread = threading.Thread(target=worker_a, name="worker-a")
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("a_late_answer", ["result", "failure"])
def test_worker_a_released_mid_flight_cannot_clobber_worker_b(make_page, vision_server, a_late_answer):
    page = make_page()
    enqueue_for_page(page)
    late = (
        Reply(body=completion('{"text": "A", "tags": ["a"], "description": "A", "nsfw": true, "score": 0.9}'))
        if a_late_answer == "result"
        else Reply(status=500, body="A failed late")
    )
    gate_a = vision_server.hang(then=late)
    vision_server.good(text="B", tags=["b"], description="B", nsfw=False, score=0.1)

    lease_a = lease_one()
    thread_a, outcome_a = _start_worker_a(lease_a)
    vision_server.wait_for_requests(1)  # A is mid-flight, its request held open

    assert enqueue_for_page(page, force=True) is EnqueueForPageOutcome.RELEASED_RUNNING
    lease_b = lease_one()
    assert lease_b.lease_generation > lease_a.lease_generation
    assert lease_b.payload.force is True
    assert run_and_settle(lease_b) is None

    gate_a.set()  # A's answer finally arrives
    thread_a.join(timeout=30)
    assert not thread_a.is_alive()

    assert outcome_a["acked"] is False  # A's late ack matched nothing
    job = Job.objects.get(id=lease_a.id)
    assert (job.state, job.lease_generation) == (JobState.DONE, lease_b.lease_generation)
    row = PageAnalysis.objects.get(page=page)
    assert row.state == PageAnalysis.State.DONE
    assert (row.ocr_text, row.tags, row.scene_description, row.nsfw) == ("B", ["b"], "B", False)
    assert row.error == ""
