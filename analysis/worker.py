"""The analyze worker role: `analyze_page` only, so analysis never contends with crawl jobs."""

from __future__ import annotations

from typing import Any

from crawler.status.handle import StatusHandle
from crawler.workers.roles import PublishedStatus
from jobs.worker.loop import Worker, WorkerConfig


def analyze_worker(*, concurrency: int = 1, **overrides: Any) -> Worker:
    """A worker of the kinds `AnalysisConfig.ready()` registered for the "analyze" role."""
    status = StatusHandle(concurrency)
    config = WorkerConfig.for_role("analyze", concurrency=concurrency, hooks=PublishedStatus(status), **overrides)
    return Worker(config, status=status)
