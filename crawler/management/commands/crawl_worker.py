"""`manage.py crawl_worker`: the long-running crawl worker (run it under systemd)."""

from django.conf import settings
from django.core.management.base import CommandError

from crawler.workers.roles import crawl_worker
from jobs.commands import WorkerCommand, add_loop_options, positive_int
from jobs.worker.processes import run_processes, split_threads


class Command(WorkerCommand):
    help = "Lease and run crawl jobs (chapter downloads, manga syncs, metadata and reconcile passes)."

    def add_arguments(self, parser):
        add_loop_options(parser)
        parser.add_argument("--workers", type=positive_int, default=None, help="jobs at once (JOBS_WORKERS)")
        parser.add_argument(
            "--processes",
            type=positive_int,
            default=1,
            help="run the job threads in this many worker processes, --workers shared between them "
            "(one process uses one core of Python; default 1)",
        )
        parser.add_argument(
            "--no-schedule", action="store_true", help="do not enqueue the periodic metadata pass from this worker"
        )

    def handle(self, *args, **options):
        threads = options["workers"] or settings.JOBS_WORKERS
        try:
            shares = split_threads(threads, options["processes"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None

        if len(shares) > 1:
            # What the first job imports (the adapters, httpx: crawler.workers.handlers), imported once here
            # before the fork and shared by the children, rather than once in each.
            from sources.kinds import preload_adapters

            preload_adapters()

        def run_one(concurrency: int) -> int:
            worker = crawl_worker(concurrency=concurrency, schedule=not options["no_schedule"])
            return worker.run(once=options["once"], drain=options["drain"])

        code = run_processes(shares, run_one)
        if code:
            raise SystemExit(code)
