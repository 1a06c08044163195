"""An analyze worker's phase counts the pages it analysed and failed, each page once, across its job threads."""

from __future__ import annotations

import threading

from analysis.progress import analysing, page_finished
from jobs.worker.status.handle import StatusHandle


def test_each_finished_page_moves_the_workers_phase():
    status = StatusHandle()
    page_finished(status, failed=False)
    page_finished(status, failed=True)
    page_finished(status, failed=False)
    assert status.snapshot().phase == analysing(2, 1) == {"state": "analysing", "analysed": 2, "failed": 1}


def test_two_workers_count_apart_and_concurrent_job_threads_lose_no_page():
    first, second = StatusHandle(), StatusHandle()
    threads = [
        threading.Thread(target=lambda: [page_finished(first, failed=False) for _ in range(50)]) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    page_finished(second, failed=True)
    assert first.snapshot().phase["analysed"] == 200
    assert second.snapshot().phase == analysing(0, 1)
