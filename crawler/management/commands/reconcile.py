"""`manage.py reconcile`: one list-only reconcile pass in the foreground (fit for cron), or `--enqueue` it."""

from crawler.passes.foreground import PassCommand, run_reconcile_with_progress
from crawler.payloads import Reconcile


class Command(PassCommand):
    help = "Walk each source's full list and enqueue sync_manga for every manga missing from the library."
    label = "reconcile"
    payload_class = Reconcile

    def run_pass(self, row, *, console, browser, options):
        stats = run_reconcile_with_progress(row, console=console, browser=browser)
        return f"walked={stats.walked} missing={stats.missing} enqueued={stats.enqueued} skipped={stats.skipped}"
