"""The `verify_library` job: the verify pass run by a crawl worker, resumed by the next job when cut short.

The job runs until its deadline (a little under its kind's timeout) and
stops at a batch boundary; the run keeps its cursor, so the next
`verify_library` job (cron's `manage.py verify --enqueue`) carries on from
there instead of starting over.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from jobs.kinds import Kind
from jobs.payloads import Payload

logger = logging.getLogger(__name__)

# A pass over millions of rows takes longer than any one job should hold a worker: it runs in slices.
VERIFY_JOB_TIMEOUT_SECS = 3600.0
STOP_BEFORE_TIMEOUT_SECS = 120.0


@dataclass(frozen=True)
class VerifyLibrary(Payload):
    """Run (or resume) the verify pass; `full` hashes every page's bytes instead of a sample."""

    kind: ClassVar[str] = "verify_library"
    full: bool = False

    def dedup_key(self) -> str:
        return self.kind  # one pass at a time: two would walk and report the same rows


def handle_verify_library(payload: VerifyLibrary, ctx: Any) -> None:
    from django.conf import settings

    from upkeep.verify.run import Options, run_verify, start_or_resume

    options = Options(
        full=payload.full, sample_pages=settings.VERIFY_SAMPLE_PAGES, export_dir=settings.LIBRARY_EXPORT_DIR
    )
    run = start_or_resume(options)
    deadline = time.monotonic() + VERIFY_JOB_TIMEOUT_SECS - STOP_BEFORE_TIMEOUT_SECS
    finished = run_verify(run, deadline=deadline, cancel=ctx.cancel)
    logger.info("verify run %s %s: %s", run.pk, "finished" if finished else "paused", run.counts)


UPKEEP_KINDS: tuple[Kind, ...] = (
    Kind(VerifyLibrary, handle_verify_library, role="crawl", timeout_secs=VERIFY_JOB_TIMEOUT_SECS),
)
