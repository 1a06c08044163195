"""`manage.py metadata_pass`: one newest-first metadata pass in the foreground (fit for cron), or `--enqueue` it."""

from crawler.passes.foreground import PassCommand, run_metadata_pass_with_progress
from crawler.payloads import MetadataPass
from jobs.commands import positive_int
from sources.errors import CrawlerError


class Command(PassCommand):
    help = "Walk each source newest first, updating metadata, covers and chapter lists (early stop when caught up)."
    label = "metadata pass"
    payload_class = MetadataPass

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--limit", type=positive_int, default=None, help="visit at most N mangas (not clean)")

    def run_pass(self, row, *, console, browser, options):
        stats = run_metadata_pass_with_progress(row, console=console, browser=browser, limit=options["limit"])
        if stats.aborted:
            raise CrawlerError(f"aborted after {stats.mangas_failed} manga failures")
        return (
            f"discovered={stats.discovered} upserted={stats.upserted} "
            f"covers={stats.covers_fetched} failed={stats.mangas_failed} "
            f"config_errors={stats.config_errors} dates_unparsed={stats.dates_unparsed}"
            + (
                f" chapters_skipped_external={stats.chapters_external} "
                f"chapters_skipped_unavailable={stats.chapters_unavailable}"
                if stats.chapters_external or stats.chapters_unavailable
                else ""
            )
        )
