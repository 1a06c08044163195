"""`manage.py notify_digest`: run one digest pass now (for cron, or after a crawl drains); the worker sends them."""

from django.core.management.base import BaseCommand

from notify.digests.passes import run_digest_pass


class Command(BaseCommand):
    help = "Claim the chapters that became readable since the last pass and queue each user's digest."

    def handle(self, *args, **options):
        outcome = run_digest_pass()
        self.stdout.write(f"{outcome.chapters} chapter(s) ready, {outcome.digests} digest(s) queued")
