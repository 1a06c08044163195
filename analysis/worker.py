"""The analyze worker role: `analyze_page` only, so analysis never contends with crawl jobs."""

from __future__ import annotations

from typing import Any

from jobs.worker.loop import Worker, WorkerConfig
from jobs.worker.status.handle import StatusHandle
from jobs.worker.status.publish import PublishedStatus


def analyze_worker(*, concurrency: int = 1, **overrides: Any) -> Worker:
    """A worker of the kinds `AnalysisConfig.ready()` registered for the "analyze" role."""
    status = StatusHandle(concurrency)
    config = WorkerConfig.for_role("analyze", concurrency=concurrency, hooks=PublishedStatus(status), **overrides)
    return Worker(config, status=status)
