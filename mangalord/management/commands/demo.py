"""`manage.py demo`: a whole Mangalord on one machine in one command.

Migrates, creates the demo source and an admin account, starts the built-in
demo manga site on 127.0.0.1, runs a metadata pass, drains the crawl queue
(and the analysis queue) with progress bars, prints what was stored and where
to look, then serves the site until interrupted. Works on the embedded SQLite
default and on PostgreSQL, and is re-runnable: a second run finds the library
caught up (the metadata pass stops at the first unchanged manga) and is quick.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import secrets
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count, Q, Sum
from rich.console import Console

from crawler.management.commands._passes import progress_display, run_metadata_pass_with_progress
from jobs.commands import positive_int
from mangalord import web_server

DEMO_SOURCE_ID = "demo"
QUIET_LOGGERS = ("crawler", "analysis", "catalog")
# A catalog a newcomer can crawl and analyse on a laptop CPU in a few minutes.
DEMO_CHAPTERS = (2, 4)
DEMO_PAGES = (2, 4)
PROGRESS_REFRESH_SECS = 0.3


class Command(BaseCommand):
    help = "Crawl the built-in demo site into a fresh library and serve it on 127.0.0.1:8000."

    def add_arguments(self, parser):
        parser.add_argument("--mangas", type=positive_int, default=30, help="size of the demo catalog")
        parser.add_argument("--no-analysis", action="store_true", help="skip page analysis")
        parser.add_argument("--no-serve", action="store_true", help="exit after the summary")
        parser.add_argument("--addr", default="127.0.0.1", help="address to serve on")
        parser.add_argument("--port", type=positive_int, default=8000, help="port to serve on")

    def handle(self, *args, **options):
        if not options["no_serve"]:
            # Minutes of crawling first and a bind error after would waste the newcomer's time.
            problem = port_problem(options["addr"], options["port"])
            if problem:
                raise CommandError(problem, returncode=2)
        console = Console(file=self.stdout._out)
        started = time.monotonic()
        if options["verbosity"] < 2:
            # The progress bars tell the story; per-job log lines (still
            # shown with -v 2) would scroll them away. Warnings stay visible.
            for name in QUIET_LOGGERS:
                logging.getLogger(name).setLevel(logging.WARNING)
        analysis = not options["no_analysis"] and settings.ANALYSIS_ENABLED
        if not analysis:
            # Read at call time by the pipeline: no analysis jobs get enqueued.
            settings.ANALYSIS_ENABLED = False

        allow_demo_site()
        console.rule("[bold]Mangalord demo")
        console.print("Preparing the database ...")
        call_command("migrate", interactive=False, verbosity=0)
        credentials = ensure_admin()

        site, source = start_site(options["mangas"])
        try:
            console.print(f"Demo manga site on {site.base_url} ({options['mangas']} mangas)")
            stats = run_metadata_pass_with_progress(source, console=console, browser=None)
            caught_up = " (caught up: stopped at the first unchanged manga)" if stats.stopped_early else ""
            console.print(f"Metadata pass: {stats.discovered} visited, {stats.upserted} new or updated{caught_up}")
            drain_with_progress(console, analysis=analysis)
            summary = library_summary()
            self.print_summary(console, summary, credentials, options, time.monotonic() - started)
            if not options["no_serve"]:
                serve(options["addr"], options["port"])
        finally:
            site.stop()

    def print_summary(self, console: Console, summary: dict[str, Any], credentials: str, options, elapsed: float):
        base = f"http://{options['addr']}:{options['port']}"
        console.rule("[bold]Stored")
        console.print(
            f"{summary['mangas']} mangas ({summary['covers']} covers), {summary['chapters']} chapters "
            f"({summary['chapters_done']} downloaded), {summary['pages']} pages, "
            f"{summary['bytes'] / 1_000_000:.1f} MB"
        )
        if summary["analysis"]["total"]:
            a = summary["analysis"]
            console.print(
                f"Analysis: {a['done']} pages analysed, {a['failed']} failed, {a['nsfw']} flagged NSFW, "
                f"{a['with_text']} with OCR text"
            )
        if summary["dead_jobs"]:
            console.print(f"[yellow]{summary['dead_jobs']} job(s) dead-lettered: see the dashboard")
        console.print(f"Finished in {elapsed:.1f} s")
        console.rule("[bold]Where to look")
        console.print(f"Reader     {base}/   {credentials}", soft_wrap=True)
        console.print(f"OPDS       {base}/opds/   {credentials} (HTTP Basic)", soft_wrap=True)
        console.print(f"Admin      {base}/admin/   {credentials}", soft_wrap=True)
        console.print(f"Dashboard  {base}/admin/crawler/")
        console.print(f"API        {base}/api/v1/mangas/")
        console.print(f"API docs   {base}/api/docs/")
        if options["no_serve"]:
            console.print("(--no-serve: start the site later with `python manage.py serve`)")


def ensure_admin() -> str:
    """Create the admin account once; returns how to sign in (never a stored password on re-runs)."""
    user_model = get_user_model()
    username = settings.DEMO_ADMIN_USER
    password = settings.DEMO_ADMIN_PASSWORD
    user = user_model.objects.filter(username=username).first()
    if user is None:
        generated = not password
        password = password or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username, f"{username}@localhost", password)
        shown = password if generated else "(from DEMO_ADMIN_PASSWORD)"
        return f"user {username!r}, password {shown}"
    if password:
        user.set_password(password)
        user.save(update_fields=["password"])
        return f"user {username!r}, password from DEMO_ADMIN_PASSWORD"
    return f"user {username!r} (existing; `python manage.py changepassword {username}` resets it)"


def allow_demo_site() -> None:
    """The demo site listens on 127.0.0.1, which the outbound rule refuses unless named: name it, for this run only.

    Read at call time by the crawler (`crawler.sources.outbound`); the operator's own allowance is kept beside it.
    """
    demo = ipaddress.ip_network("127.0.0.1/32")
    if demo not in settings.OUTBOUND_ALLOWED_NETWORKS:
        settings.OUTBOUND_ALLOWED_NETWORKS = (*settings.OUTBOUND_ALLOWED_NETWORKS, demo)


def start_site(mangas: int):
    """Start the demo site and point the demo source at it.

    The port of the previous run is reused when it is free: stored URLs (and
    the metadata fingerprint, which includes the cover URL) then stay valid,
    so a re-run finds everything unchanged.
    """
    from catalog.models import Source
    from crawler.control import sites, source_changes
    from crawler.demo_site import start_demo_site

    row = Source.objects.filter(id=DEMO_SOURCE_ID).first()
    previous_port = (urlsplit(row.base_url).port or 0) if row else 0
    try:
        site = start_demo_site("127.0.0.1", previous_port, mangas=mangas, chapters=DEMO_CHAPTERS, pages=DEMO_PAGES)
    except OSError:  # taken by something else since: any free port
        site = start_demo_site("127.0.0.1", 0, mangas=mangas, chapters=DEMO_CHAPTERS, pages=DEMO_PAGES)
    # The path every change of a source takes (audited, run by the machine's operator), like add_source.
    if row is None:
        row = Source(id=DEMO_SOURCE_ID, name="Demo manga site", kind=Source.Kind.DEMO, base_url=site.base_url)
        sites.add_site(actor=None, row=row, check=False, via="cli")
        return site, row
    changes = {"base_url": site.base_url, "enabled": True}
    return site, source_changes.change_source(actor=None, source_id=row.id, changes=changes, via="cli").source


def drain_with_progress(console: Console, *, analysis: bool) -> None:
    """Run the crawl queue dry with a crawl worker, then the analysis queue, with progress bars."""
    from crawler.workers.roles import crawl_worker

    with progress_display(console) as progress:
        chapters = progress.add_task("chapters", total=None, detail="")
        run_in_background(crawl_worker(schedule=False), lambda: update_chapters(progress, chapters))
        if analysis:
            try:
                from analysis.worker import analyze_worker

                worker = analyze_worker(concurrency=settings.CRAWLER_WORKERS)
            except ImportError:
                console.print("(analysis is not available in this install; skipped)")
                return
            pages = progress.add_task("page analysis", total=None, detail="")
            run_in_background(worker, lambda: update_analysis(progress, pages))


def run_in_background(worker, refresh) -> None:
    """Drain with `worker` on a thread while this thread refreshes the progress bars."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            worker.run(drain=True, install_signals=False)
        except BaseException as exc:  # re-raised on the main thread
            failure.append(exc)

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


def update_chapters(progress, task) -> None:
    from catalog.models import Chapter, Page

    counts = Chapter.objects.filter(source_id=DEMO_SOURCE_ID, dropped_at__isnull=True).aggregate(
        total=Count("id"), done=Count("id", filter=Q(sync_state=Chapter.SyncState.DONE))
    )
    pages = Page.objects.filter(chapter__source_id=DEMO_SOURCE_ID).count()
    progress.update(task, total=counts["total"], completed=counts["done"], detail=f"{pages} pages")


def update_analysis(progress, task) -> None:
    from analysis.models import PageAnalysis
    from catalog.models import Page

    total = Page.objects.count()
    finished = PageAnalysis.objects.filter(state__in=[PageAnalysis.State.DONE, PageAnalysis.State.FAILED]).count()
    progress.update(task, total=total, completed=finished, detail="")


def library_summary() -> dict[str, Any]:
    from analysis.models import PageAnalysis
    from catalog.models import Chapter, Manga, Page
    from jobs.models import Job, JobState

    analyses = PageAnalysis.objects.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(state=PageAnalysis.State.DONE)),
        failed=Count("id", filter=Q(state=PageAnalysis.State.FAILED)),
        nsfw=Count("id", filter=Q(nsfw=True)),
        with_text=Count("id", filter=~Q(ocr_text="")),
    )
    return {
        "mangas": Manga.objects.count(),
        "covers": Manga.objects.filter(cover_state=Manga.CoverState.STORED).count(),
        "chapters": Chapter.objects.filter(dropped_at__isnull=True).count(),
        "chapters_done": Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count(),
        "pages": Page.objects.count(),
        "bytes": Page.objects.aggregate(n=Sum("bytes"))["n"] or 0,
        "analysis": analyses,
        "dead_jobs": Job.objects.filter(state=JobState.DEAD).count(),
    }


def port_problem(addr: str, port: int) -> str | None:
    """Why the site could not be served on addr:port (taken, not an address of this host), or None."""
    try:
        infos = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"cannot serve on {addr}:{port}: {exc.strerror} (pick another with --addr)"
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: TIME_WAIT is no conflict
        try:
            sock.bind(address)
        except OSError as exc:
            hint = (
                "is another server running there? pick another with --port"
                if exc.errno == errno.EADDRINUSE
                else ("pick another with --addr or --port")
            )
            return f"cannot serve on {addr}:{port}: {exc.strerror} ({hint})"
    return None


def serve(addr: str, port: int) -> None:
    """Serve the site (the production web process, one worker, static files included) with a crawl worker beside it.

    The worker makes the dashboard's controls (run a pass, reconcile,
    requeue) do real work while the demo runs.
    """
    from crawler.workers.roles import crawl_worker

    worker = crawl_worker(schedule=False)
    thread = threading.Thread(
        target=worker.run, kwargs={"install_signals": False}, name="demo-crawl-worker", daemon=True
    )
    thread.start()
    try:
        web_server.run(addr, port, workers=1)
    finally:
        worker.request_stop()
        thread.join(10)
