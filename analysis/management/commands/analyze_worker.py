"""`manage.py analyze_worker`: the long-running page-analysis worker (run it under systemd)."""

from analysis.worker import analyze_worker
from jobs.commands import WorkerCommand, add_loop_options, positive_int


class Command(WorkerCommand):
    help = "Lease and run analyze_page jobs only, so analysis never contends with crawl jobs."

    def add_arguments(self, parser):
        add_loop_options(parser)
        parser.add_argument("--workers", type=positive_int, default=1, help="pages analysed at once")

    def handle(self, *args, **options):
        worker = analyze_worker(concurrency=options["workers"])
        worker.run(once=options["once"], drain=options["drain"])
