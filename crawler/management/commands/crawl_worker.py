"""`manage.py crawl_worker`: the long-running crawl worker (run it under systemd)."""

from django.core.management.base import BaseCommand

from crawler.workers.roles import crawl_worker
from jobs.commands import add_loop_options, positive_int


class Command(BaseCommand):
    help = "Lease and run crawl jobs (chapter downloads, manga syncs, metadata and reconcile passes)."

    def add_arguments(self, parser):
        add_loop_options(parser)
        parser.add_argument("--workers", type=positive_int, default=None, help="jobs at once (CRAWLER_WORKERS)")
        parser.add_argument(
            "--no-schedule", action="store_true", help="do not enqueue the periodic metadata pass from this worker"
        )

    def handle(self, *args, **options):
        worker = crawl_worker(concurrency=options["workers"], schedule=not options["no_schedule"])
        worker.run(once=options["once"], drain=options["drain"])
