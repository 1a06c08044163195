"""`manage.py analyze_worker`: the long-running page-analysis worker (run it under systemd)."""

from django.core.management.base import BaseCommand

from analysis.worker import analyze_worker
from jobs.commands import add_loop_options, positive_int


class Command(BaseCommand):
    help = "Lease and run analyze_page jobs only, so analysis never contends with crawl jobs."
    # Django's system checks look at the web process's parts (the URLconf and every view behind it, templates,
    # the admin, security headers): 0.2 s of CPU at each start of a worker that uses none of them. `migrate`
    # and `check` still run them at every deploy.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        add_loop_options(parser)
        parser.add_argument("--workers", type=positive_int, default=1, help="pages analysed at once")

    def handle(self, *args, **options):
        worker = analyze_worker(concurrency=options["workers"])
        worker.run(once=options["once"], drain=options["drain"])
