"""The `analyze_page` job handler: decode, skip what is done, run the backend, record the outcome.

The worker acks the handler's return as done and an exception as a failed
attempt. Every write to the page's analysis goes through the lease guard in
`analysis.service`, so a worker whose lease was released mid-flight
(force-analyze) neither stores its stale result nor its stale failure.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from analysis import progress, service
from analysis.backends.base import AnalysisError
from analysis.backends.configured import get_backend
from analysis.payloads import AnalyzePage
from catalog.models import Page
from catalog.storage import local_copy
from jobs.errors import JobCancelled
from jobs.kinds import Kind
from jobs.worker.hooks import JobContext

logger = logging.getLogger(__name__)


@contextmanager
def local_image_path(page: Page) -> Iterator[str]:
    """A filesystem path to the page image for the backend, whatever the storage (a temp copy for S3)."""
    if not page.image:
        raise AnalysisError(f"page {page.id} has no stored image")
    with local_copy(page.image.name, storage=page.image.storage, suffix=os.path.splitext(page.image.name)[1]) as path:
        yield path


def handle_analyze_page(payload: AnalyzePage, ctx: JobContext) -> None:
    lease = ctx.lease
    page = Page.objects.filter(id=payload.page_id).first()
    if page is None:
        logger.warning("analyze_page: page %s no longer exists; nothing to do", payload.page_id)
        return
    analysis = service.ensure_analysis_row(page)
    if service.should_skip(analysis, payload):
        logger.info("analyze_page: page %s is already analysed; skipping (not a force job)", page.id)
        return
    if ctx.cancel.is_set():
        raise JobCancelled(f"analysis of page {page.id} cancelled before it started")
    if not service.mark_running(lease, page.id):
        return  # the lease went stale already: the page belongs to its successor
    backend = get_backend()
    started = time.monotonic()
    try:
        with local_image_path(page) as image_path:
            result = backend.analyze(image_path, page.content_type)
    except Exception as exc:
        _record_failure(lease, page.id, exc)
        progress.page_finished(ctx.status, failed=True)
        raise
    duration_ms = round((time.monotonic() - started) * 1000)
    if ctx.cancel.is_set():
        raise JobCancelled(f"analysis of page {page.id} cancelled; result discarded")
    if service.record_success(lease, page.id, result, backend=backend.name, duration_ms=duration_ms):
        progress.page_finished(ctx.status, failed=False)
        logger.info(
            "analyze_page: page %s done in %d ms backend=%s nsfw=%s tags=%s",
            page.id,
            duration_ms,
            backend.name,
            result.nsfw,
            ",".join(result.tags),
        )


def _record_failure(lease: Any, page_id: Any, exc: Exception) -> None:
    message = str(exc) if isinstance(exc, AnalysisError) else f"{type(exc).__name__}: {exc}"
    try:
        service.record_failure(lease, page_id, message)
    except Exception:  # the attempt's own error matters more; the worker still acks it failed
        logger.exception("analyze_page: could not record the failure of page %s", page_id)


ANALYSIS_KINDS: tuple[Kind, ...] = (Kind(AnalyzePage, handle_analyze_page, role="analyze"),)
