"""Plain helpers for the analysis tests: page images, a job context, leasing and settling like the worker."""

from __future__ import annotations

import io
from datetime import timedelta
from threading import Event

from PIL import Image, ImageDraw, ImageFont

from analysis.handlers import handle_analyze_page
from analysis.payloads import AnalyzePage
from analysis.worker import analyze_worker
from crawler.workers.handlers import JobContext
from jobs import queue
from jobs.lease import Lease
from jobs.worker.status.handle import StatusHandle


def text_page(text: str = "CHAPTER 2 PAGE 3", size: tuple[int, int] = (800, 1200), fmt: str = "PNG") -> bytes:
    """A white page with `text` drawn large in black, like a scanned caption."""
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).text((60, size[1] // 3), text, fill="black", font=ImageFont.load_default(size=48))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def job_context(lease: Lease, cancel: Event | None = None) -> JobContext:
    return JobContext(lease=lease, status=StatusHandle(1), cancel=cancel or Event())


def lease_one() -> Lease:
    """Lease the one leasable analyze_page job, as a worker would."""
    leases = queue.lease([AnalyzePage.kind], 1, timedelta(minutes=5))
    assert len(leases) == 1, "expected exactly one leasable analyze_page job"
    return leases[0]


def run_handler(lease: Lease) -> BaseException | None:
    """Run the handler for `lease` in this thread; returns what it raised."""
    try:
        handle_analyze_page(lease.payload, job_context(lease))
    except Exception as exc:
        return exc
    return None


def run_and_settle(lease: Lease) -> BaseException | None:
    """Run the handler, then ack the lease exactly as the analyze worker's loop does; returns the error."""
    error = run_handler(lease)
    analyze_worker().settle(lease, error)
    return error
