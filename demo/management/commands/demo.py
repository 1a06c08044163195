"""`manage.py demo`: a whole Mangalord on one machine in one command, with a first view in seconds.

Migrates, creates the demo source and an admin account, starts the built-in
demo manga site on 127.0.0.1, runs a metadata pass and drains the crawl queue
with progress bars, prints what was stored and where to look, then serves the
site at once while page analysis goes on in the background (a bar on the
console, its queue and worker on the dashboard). With `--no-serve` it drains
the analysis in the foreground instead and exits. The log goes to a file in
the data directory, never over the bars. Works on the embedded SQLite default
and on PostgreSQL, and is re-runnable: a second run finds the library caught up
(the metadata pass stops at the first unchanged manga) and is quick.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from rich.console import Console

from crawler.passes.foreground import run_metadata_pass_with_progress
from demo.logfile import LOG_FILE_NAME, log_to_file
from demo.preparation import allow_demo_site, ensure_admin, start_site
from demo.progress import analysis_worker, drain_analysis, drain_crawl
from demo.serving import port_problem, serve
from demo.summary import analysis_line, analysis_summary, library_summary, print_stored, print_where_to_look
from jobs.commands import positive_int


class Command(BaseCommand):
    help = "Crawl the built-in demo site into a fresh library and serve it on 127.0.0.1:8000 while it is analysed."

    def add_arguments(self, parser):
        parser.add_argument("--mangas", type=positive_int, default=30, help="size of the demo catalog")
        parser.add_argument("--no-analysis", action="store_true", help="skip page analysis")
        parser.add_argument("--no-serve", action="store_true", help="analyse in the foreground, exit after the summary")
        parser.add_argument("--addr", default="127.0.0.1", help="address to serve on")
        parser.add_argument("--port", type=positive_int, default=8000, help="port to serve on")

    def handle(self, *args, **options):
        if not options["no_serve"]:
            # Seconds of crawling first and a bind error after would waste the newcomer's time.
            problem = port_problem(options["addr"], options["port"])
            if problem:
                raise CommandError(problem, returncode=2)
        started = time.monotonic()
        # Rich draws on the raw stream; Django's wrapper would add line endings to every fragment.
        console = Console(file=self.stdout._out)
        log_path = log_to_file(settings.DATA_DIR / LOG_FILE_NAME)
        analysis = not options["no_analysis"] and settings.ANALYSIS_ENABLED
        if not analysis:
            # Read at call time by the pipeline: no analysis jobs get enqueued.
            settings.ANALYSIS_ENABLED = False

        allow_demo_site()
        console.rule("[bold]Mangalord demo")
        console.print(f"Log: {log_path}", soft_wrap=True)
        console.print("Preparing the database ...")
        call_command("migrate", interactive=False, verbosity=0)
        credentials = ensure_admin()
        site, source = start_site(options["mangas"])
        try:
            console.print(f"Demo manga site on {site.base_url} ({options['mangas']} mangas)")
            stats = run_metadata_pass_with_progress(source, console=console, browser=None)
            caught_up = " (caught up: stopped at the first unchanged manga)" if stats.stopped_early else ""
            console.print(f"Metadata pass: {stats.discovered} visited, {stats.upserted} new or updated{caught_up}")
            drain_crawl(console)
            print_stored(console, library_summary())
            worker = analysis_worker() if analysis else None
            if analysis and worker is None:
                console.print("(analysis is not available in this install; skipped)")
            if options["no_serve"]:
                self.finish(console, worker, credentials, options, log_path, started)
            else:
                self.serve(console, worker, credentials, options, log_path, started)
        finally:
            site.stop()

    def finish(self, console: Console, worker: Any, credentials: str, options, log_path, started: float) -> None:
        """`--no-serve`: the analysis drained here, then where to look once the site is started."""
        if worker is not None:
            drain_analysis(console, worker)
            console.print(analysis_line(analysis_summary()))
        console.print(f"Finished in {time.monotonic() - started:.1f} s")
        print_where_to_look(console, base_url(options), credentials)
        console.print(f"Log        {log_path}", soft_wrap=True)
        console.print("(--no-serve: start the site later with `python manage.py serve`)")

    def serve(self, console: Console, worker: Any, credentials: str, options, log_path, started: float) -> None:
        """The site served now, the analysis going on beside it."""
        console.print(f"Ready in {time.monotonic() - started:.1f} s")
        print_where_to_look(console, base_url(options), credentials)
        console.print(f"Log        {log_path}", soft_wrap=True)
        if worker is not None:
            console.print("Page analysis goes on in the background (bar below; queue on the dashboard).")
        console.print("Serving until Ctrl-C.")
        with open(log_path, "a", encoding="utf-8", buffering=1) as log:
            serve(options["addr"], options["port"], console=console, analysis=worker, log=log)


def base_url(options: dict[str, Any]) -> str:
    return f"http://{options['addr']}:{options['port']}"
