"""The demo's workers on threads of its own process, followed on the console with progress bars.

The crawl queue is drained before anything is served (the library is what a newcomer came to see).
Page analysis then either drains in the foreground (`--no-serve`: the command ends with the library
analysed) or runs beside the web server while a bar follows it, so the first view does not wait for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.db.models import Count, Q
from rich.console import Console

from catalog.models import Chapter, Page
from crawler.passes.foreground import progress_display
from demo.preparation import DEMO_SOURCE_ID
from demo.summary import analysis_line, analysis_summary

logger = logging.getLogger(__name__)

PROGRESS_REFRESH_SECS = 0.3
# How often the console's background-analysis bar reads the counts (two small queries).
FOLLOW_SECS = 1.0


def drain_crawl(console: Console) -> None:
    """Run the crawl queue dry with a crawl worker on a thread, the chapters bar following it."""
    from crawler.workers.roles import crawl_worker

    with progress_display(console) as progress:
        task = progress.add_task("chapters", total=None, detail="")
        run_in_background(crawl_worker(schedule=False), lambda: update_chapters(progress, task))


def analysis_worker() -> Any:
    """The analyze role's worker, or None when this install cannot analyse."""
    try:
        from analysis.worker import analyze_worker
    except ImportError:
        return None
    return analyze_worker(concurrency=settings.JOBS_WORKERS)


def drain_analysis(console: Console, worker: Any) -> None:
    """Run the analysis queue dry in the foreground, with its bar."""
    with progress_display(console) as progress:
        task = progress.add_task("page analysis", total=None, detail="")
        run_in_background(worker, lambda: update_analysis(progress, task))


def run_in_background(worker: Any, refresh: Callable[[], None]) -> None:
    """Drain with `worker` on a thread while this thread refreshes the progress bars."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            worker.run(drain=True, install_signals=False)
        except BaseException as exc:  # re-raised on the main thread
            failure.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=target, name=f"demo-{worker.config.role}", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            refresh()
            thread.join(PROGRESS_REFRESH_SECS)
    except KeyboardInterrupt:
        worker.request_stop()
        thread.join(10)
        raise
    refresh()
    if failure:
        raise failure[0]


def update_chapters(progress: Any, task: Any) -> None:
    counts = Chapter.objects.filter(source_id=DEMO_SOURCE_ID, dropped_at__isnull=True).aggregate(
        total=Count("id"), done=Count("id", filter=Q(sync_state=Chapter.SyncState.DONE))
    )
    pages = Page.objects.filter(chapter__source_id=DEMO_SOURCE_ID).count()
    progress.update(task, total=counts["total"], completed=counts["done"], detail=f"{pages} pages")


def update_analysis(progress: Any, task: Any) -> dict[str, int]:
    counts = analysis_summary()
    progress.update(task, total=counts["pages"], completed=counts["finished"], detail=f"{counts['waiting']} to go")
    return counts


class WorkerThread:
    """A long-running worker (no drain) on a daemon thread beside the web server; `stop` hands its jobs back."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.thread = threading.Thread(target=self._run, name=f"demo-{worker.config.role}-worker", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run(install_signals=False)
        finally:
            connection.close()

    def stop(self, timeout: float = 15.0) -> None:
        self.worker.request_stop()
        self.thread.join(timeout)


class AnalysisFollower:
    """The background analysis's bar on the console while the site is served, and one line when it is done."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._follow, name="demo-analysis-follower", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)

    def _follow(self) -> None:
        counts = None
        try:
            with progress_display(self.console) as progress:
                task = progress.add_task("page analysis (background)", total=None, detail="")
                while True:
                    counts = self._read(progress, task) or counts
                    if counts is not None and not counts["waiting"]:
                        break
                    if self.stopping.wait(FOLLOW_SECS):
                        return
        finally:
            connection.close()
        self.console.print(analysis_line(counts, heading="Analysis finished"))

    @staticmethod
    def _read(progress: Any, task: Any) -> dict[str, int] | None:
        """The counts, or None when the database was busy this time (the next read catches up)."""
        close_old_connections()
        try:
            return update_analysis(progress, task)
        except DatabaseError as exc:
            logger.warning("demo: could not read the analysis progress (%s); retrying", exc)
            return None
