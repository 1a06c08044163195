"""Metadata and reconcile passes run in the foreground of a command, with a live progress display.

Shared by the pass commands (`metadata_pass`, `reconcile`, `add_source`) and `manage.py demo`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from catalog.models import Source
from jobs import queue
from jobs.worker.status.handle import StatusHandle
from sources.errors import CrawlerError


def target_sources(source_ids: list[str] | None) -> list[Source]:
    """The named sources (each must exist), or every enabled one."""
    if not source_ids:
        rows = list(Source.objects.filter(enabled=True).order_by("id"))
        if not rows:
            raise CommandError("no enabled source; create one in the admin (or run `manage.py demo`)")
        return rows
    rows = list(Source.objects.filter(id__in=source_ids))
    missing = sorted(set(source_ids) - {r.id for r in rows})
    if missing:
        raise CommandError(f"unknown source(s): {', '.join(missing)}")
    return rows


@contextmanager
def shared_browser() -> Iterator[Any]:
    """One browser manager for the command's passes (it only launches Chromium when a source needs it)."""
    from sources.browser import BrowserManager

    browser = BrowserManager()
    try:
        yield browser
    finally:
        browser.close()


def progress_display(console: Console) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def run_metadata_pass_with_progress(
    row: Source, *, console: Console, browser: Any, limit: int | None = None, cancel: threading.Event | None = None
) -> Any:
    """One metadata pass; the bar follows the pass's own `fetching_metadata{index,total}` phase."""
    from crawler.passes.metadata_pass import run_metadata_pass

    status = StatusHandle()
    with progress_display(console) as progress:
        task = progress.add_task(f"metadata pass {row.id}", total=None, detail="walking the list")

        def follow() -> None:
            phase = status.snapshot().phase
            if phase.get("state") == "fetching_metadata":
                progress.update(task, completed=phase["index"], total=phase["total"], detail=phase["title"][:40])
            elif phase.get("state") == "cover_backfill":
                progress.update(task, detail=f"cover backfill {phase['index']}/{phase['total']}")

        status.add_listener(follow)
        stats = run_metadata_pass(row, status=status, browser=browser, limit=limit, cancel=cancel)
        progress.update(task, total=stats.discovered or 1, completed=stats.discovered or 1, detail="done")
    return stats


def run_reconcile_with_progress(row: Source, *, console: Console, browser: Any) -> Any:
    from crawler.factory import get_source
    from crawler.passes.reconcile import run_reconcile

    source = get_source(row, browser=browser)
    try:
        with progress_display(console) as progress:
            task = progress.add_task(f"reconcile {row.id}", total=None, detail="")

            def report(walked: int, enqueued: int) -> None:
                progress.update(task, completed=walked, detail=f"{enqueued} missing enqueued")

            stats = run_reconcile(row, source, progress=report)
            progress.update(task, total=stats.walked or 1, completed=stats.walked or 1)
        return stats
    finally:
        source.close()


class PassCommand(BaseCommand):
    """A pass over each source in the foreground (progress shown, non-zero exit on failure) or `--enqueue`d.

    Subclasses name the pass, its payload class, and run it for one source,
    returning the summary line (or raising `CrawlerError`).
    """

    label: str
    payload_class: Any

    def add_arguments(self, parser):
        parser.add_argument("--source", action="append", dest="sources", help="source id (repeatable; default: all)")
        parser.add_argument("--enqueue", action="store_true", help="hand the pass to a crawl worker instead")

    def run_pass(self, row: Source, *, console: Console, browser: Any, options: dict[str, Any]) -> str:
        raise NotImplementedError

    def handle(self, *args, **options):
        rows = target_sources(options["sources"])
        if options["enqueue"]:
            for row in rows:
                result = queue.enqueue(self.payload_class(source_id=row.id))
                self.stdout.write(f"{self.label} {row.id}: {'enqueued' if result.inserted else 'already in flight'}")
            return
        # Rich draws on the raw stream; Django's wrapper would add line endings to every fragment.
        console = Console(file=self.stdout._out)
        failed = []
        with shared_browser() as browser:
            for row in rows:
                try:
                    self.stdout.write(
                        f"{self.label} {row.id}: "
                        + self.run_pass(row, console=console, browser=browser, options=options)
                    )
                except CrawlerError as exc:
                    failed.append(f"{row.id}: {type(exc).__name__}: {exc}")
        if failed:
            raise CommandError(f"{self.label} failed for " + "; ".join(failed))
