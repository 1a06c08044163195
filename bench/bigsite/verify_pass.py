"""The verify pass on a big site: one batch of each phase at a deep cursor, and a whole pass with its rate and memory.

Rows only: the seed stores no files, so the pass walks rows and finds the
storage empty. Page rows are added for the 2,000-chapter manga (20 a chapter,
40,000 rows, inside the timed call's transaction, rolled back after it): as
their files are absent every one is a `missing` finding, the most a pages
batch can write. The stored-files phase lists an empty folder. What grows
with the library is the chapters phase: every manga and chapter row.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from bigsite.operations import Operation
from bigsite.seed import Size, row_id

PAGES_PER_CHAPTER = 20

_LONG_MANGA_PAGES = f"""
INSERT INTO catalog_page (id, chapter_id, index, image, content_type, width, height, bytes, sha256, created_at)
SELECT md5('long-page-' || n || '-' || p)::uuid, md5('long-chapter-' || n)::uuid, p,
       'pages/' || md5('long-chapter-' || n)::uuid || '/' || p || '.jpg', 'image/jpeg', 800, 1200, 150000,
       md5('bytes-' || n || '-' || p) || md5('more-' || n || '-' || p), now()
  FROM generate_series(1, %(long)s) AS n, generate_series(0, {PAGES_PER_CHAPTER - 1}) AS p
"""


def add_page_rows() -> None:
    from django.db import connection

    from bigsite.seed import LONG_MANGA_CHAPTERS

    with connection.cursor() as cursor:
        cursor.execute(_LONG_MANGA_PAGES, {"long": LONG_MANGA_CHAPTERS})


def _one_batch(phase: str, cursor: dict[str, Any]) -> None:
    """Run one batch of `phase` from `cursor` (the pass stops after its first saved batch)."""
    from upkeep.models import VerifyRun
    from upkeep.verify.run import run_verify

    run = VerifyRun.objects.create(storage="filesystem", full=False, phase=phase, cursor=cursor, counts={})
    stop = threading.Event()
    run_verify(run, cancel=stop, progress=lambda _run: stop.set())


def operations(size: Size) -> list[Operation]:
    deep_manga = str(row_id("manga", size.mangas * 9 // 10))
    return [
        Operation(
            "verify: chapters batch (500 mangas, 90 %)",
            lambda: _one_batch("chapters", {"manga": deep_manga}),
            writes=True,
        ),
        Operation(
            "verify: pages batch (1,000 rows, all missing)",
            lambda: _one_batch("pages", {"chapter": "00000000-0000-0000-0000-000000000000", "index": 0}),
            writes=True,
            setup=add_page_rows,
        ),
    ]


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakRss:
    """The process's resident memory sampled every 20 ms while the block runs (tracemalloc would slow the
    ORM-heavy pass several times over): its peak above what it was at the start is what the pass held."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = _rss_mb()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())


def whole_pass() -> dict[str, float]:
    """A whole pass from a fresh run, in a transaction rolled back after it: seconds, rows, rows/s, memory."""
    from django.db import connection, transaction

    from upkeep.verify.run import Options, run_verify, start_or_resume

    with transaction.atomic():
        add_page_rows()
        with PeakRss() as rss:
            began = time.perf_counter()
            run = start_or_resume(Options(full=False, sample_pages=200), restart=True)
            run_verify(run)
            seconds = time.perf_counter() - began
        transaction.set_rollback(True)
    connection.queries_log.clear()
    counts = run.counts
    rows = counts["pages"] + counts["files"] + counts["mangas"] + counts["chapters"]
    return {
        "seconds": seconds,
        "rows": rows,
        "rows_per_s": rows / seconds if seconds else 0.0,
        "findings": sum(counts.get(k, 0) for k in ("missing", "corrupt", "orphan", "gap", "stale")),
        "rss_start_mb": rss.start,
        "rss_growth_mb": rss.peak - rss.start,
    }
