"""`manage.py notify_worker`: sends notifications, runs digest passes and health checks (run it under systemd)."""

from jobs.commands import WorkerCommand, add_loop_options, positive_int
from notify.worker import notify_worker


class Command(WorkerCommand):
    help = "Lease and run notify_send jobs; every NOTIFY_DIGEST_INTERVAL a digest pass, every NOTIFY_HEALTH_INTERVAL a health check."

    def add_arguments(self, parser):
        add_loop_options(parser)
        parser.add_argument("--workers", type=positive_int, default=2, help="notifications sent at once")
        parser.add_argument(
            "--no-schedule", action="store_true", help="only send: no digest passes or health checks from this worker"
        )

    def handle(self, *args, **options):
        worker = notify_worker(concurrency=options["workers"], schedule=not options["no_schedule"])
        worker.run(once=options["once"], drain=options["drain"])
