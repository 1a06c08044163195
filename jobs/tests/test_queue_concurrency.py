"""Producers racing on one dedup key, each on its own PostgreSQL connection."""

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection

from crawler.payloads import SyncChapterContent
from jobs import queue
from jobs.models import Job

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL"),
]


def _race(count: int, action) -> list:
    """Run `action` on `count` threads released together; each thread uses and closes its own connection."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[n] = action()
        except BaseException as exc:  # surfaced in the test thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    return results


def test_concurrent_enqueues_of_one_key_insert_exactly_one_row():
    payload = SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key="c1")

    for _ in range(5):  # several rounds: one lucky interleaving proves little
        Job.objects.all().delete()
        results = _race(8, lambda: queue.enqueue(payload))

        assert sum(r.inserted for r in results) == 1
        assert sum(r.skipped for r in results) == 7
        assert Job.objects.filter(dedup_key=payload.dedup_key()).count() == 1


def test_concurrent_leasers_never_share_a_row():
    ids = {
        queue.enqueue(SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key="c")).id
        for _ in range(60)
    }

    batches = _race(6, lambda: queue.lease(None, 10, timedelta(minutes=5)))

    leased = [lease.id for batch in batches for lease in batch]
    assert len(leased) == len(set(leased))
    assert set(leased) == ids
