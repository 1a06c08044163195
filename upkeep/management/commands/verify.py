"""`manage.py verify`: is the library whole? Gaps, missing and corrupt pages, orphan files, stale exports.

manage.py verify                      run (or resume) the pass, print the report
manage.py verify --full               hash every page's bytes, not a sample
manage.py verify --enqueue            hand the pass to a crawl worker (cron)
manage.py verify --repair pages       queue chapters with missing/corrupt pages and gaps again
manage.py verify --repair orphans     delete orphan files (asks; --yes for cron)
manage.py verify --repair exports     re-export stale chapters
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jobs.commands import positive_int
from upkeep.models import VerifyFinding, VerifyRun

REPAIRS = ("pages", "orphans", "exports")


def positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{raw!r} must be more than zero seconds")
    return value


class Command(BaseCommand):
    help = "Check the library is whole (gaps, missing/corrupt pages, orphan files, stale exports) and repair it."

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true", help="hash every page's bytes (default: a sample)")
        parser.add_argument(
            "--sample",
            type=positive_int,
            default=None,
            metavar="N",
            help="hash about N pages' bytes per pass (default VERIFY_SAMPLE_PAGES)",
        )
        parser.add_argument(
            "--export-dir", type=Path, default=None, help="the export_cbz folder to check (default LIBRARY_EXPORT_DIR)"
        )
        parser.add_argument("--restart", action="store_true", help="start a new pass instead of resuming one")
        parser.add_argument(
            "--max-seconds", type=positive_seconds, default=None, help="stop after this long (the next run resumes)"
        )
        parser.add_argument("--enqueue", action="store_true", help="queue a verify_library job for a crawl worker")
        parser.add_argument("--repair", choices=REPAIRS, action="append", default=[], help="repair the latest report")
        parser.add_argument("--yes", action="store_true", help="confirm deleting orphan files without asking")

    def handle(self, *args, **options):
        export_dir = options["export_dir"]
        if export_dir is not None and not export_dir.is_dir():
            raise CommandError(f"--export-dir {export_dir} is not a directory")
        if options["enqueue"]:
            return self._enqueue(options["full"])
        if options["repair"]:
            return self._repair(options["repair"], options["yes"], export_dir)
        self._verify(options, export_dir)

    def _enqueue(self, full: bool) -> None:
        from jobs.queue import enqueue
        from upkeep.verify.handlers import VerifyLibrary

        result = enqueue(VerifyLibrary(full=full))
        self.stdout.write("verify_library queued" if result.inserted else "a verify_library job is already queued")

    def _verify(self, options: dict, export_dir: Path | None) -> None:
        from upkeep.verify.run import Options, run_verify, start_or_resume

        chosen = Options(
            full=options["full"],
            sample_pages=settings.VERIFY_SAMPLE_PAGES if options["sample"] is None else options["sample"],
            export_dir=str(export_dir.resolve()) if export_dir else settings.LIBRARY_EXPORT_DIR,
        )
        run = start_or_resume(chosen, restart=options["restart"])
        if run.counts.get("pages") or run.cursor:
            self.stdout.write(f"resuming verify run {run.pk} at {run.phase}")
        deadline = time.monotonic() + options["max_seconds"] if options["max_seconds"] else None
        started = time.monotonic()
        finished = run_verify(run, deadline=deadline)
        elapsed = time.monotonic() - started
        self._report(run, finished, elapsed)

    def _report(self, run: VerifyRun, finished: bool, elapsed: float) -> None:
        counts = run.counts
        state = "finished" if finished else f"paused at {run.phase} (run again to resume)"
        self.stdout.write(
            f"verify run {run.pk} {state} in {elapsed:.1f}s: {counts.get('pages', 0)} pages "
            f"({counts.get('hashed', 0)} hashed), {counts.get('files', 0)} files, "
            f"{counts.get('mangas', 0)} mangas, {counts.get('chapters', 0)} chapters"
        )
        for kind in VerifyFinding.Kind:
            self.stdout.write(f"  {kind.value:8} {counts.get(kind.value, 0):>8}  {kind.label}")

    def _repair(self, repairs: list[str], yes: bool, export_dir: Path | None) -> None:
        from upkeep.verify import repairs as fix

        run = VerifyRun.objects.order_by("-started_at", "-id").first()
        if run is None:
            raise CommandError("no verify report yet: run `manage.py verify` first")
        if run.finished_at is None:
            self.stdout.write(f"verify run {run.pk} is not finished: repairing what it found so far")
        if "pages" in repairs:
            done = fix.requeue_damaged(run)
            self.stdout.write(f"{done.chapters} chapters queued again ({done.findings} findings)")
        if "orphans" in repairs:
            open_orphans = run.findings.filter(kind="orphan", repaired_at=None).count()
            if open_orphans and not yes:
                answer = input(f"Delete {open_orphans} orphan files? Type 'yes' to confirm: ")
                if answer.strip().lower() != "yes":
                    raise CommandError("orphan files kept: not confirmed")
            done = fix.delete_orphans(run, confirmed=True)
            self.stdout.write(f"{done.files} orphan files deleted ({done.findings} findings)")
        if "exports" in repairs:
            try:
                done = fix.reexport_stale(run, directory=str(export_dir) if export_dir else "")
            except FileNotFoundError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"{done.chapters} chapters exported again ({done.findings} findings)")
