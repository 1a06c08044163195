"""`manage.py download_policy SOURCE [all|followed]`: show or switch which chapters a source downloads.

Without a policy it prints the current one and the source's chapters by
download state. Switching goes through `console.control.source_changes`, the
path of every door (audited as run by the machine's operator):
to `all` queues the job that queues every chapter not downloaded yet, to
`followed` withdraws the pending downloads of mangas nobody bookmarked.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.models import Source
from catalog.source_settings import SourceSettingsError
from console.control.errors import ControlError
from console.control.source_changes import set_download_policy
from console.status.source_stats import chapter_downloads
from crawler import download_policy


class Command(BaseCommand):
    help = "Show or set a source's download policy: 'all' chapters, or only mangas some user 'followed' (bookmarked)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="source id")
        parser.add_argument("policy", nargs="?", choices=download_policy.POLICIES, help="the new policy")

    def handle(self, *args: Any, **options: Any) -> None:
        source_id, policy = options["source"], options["policy"]
        if policy is None:
            source = Source.objects.filter(id=source_id).first()
            if source is None:
                raise CommandError(f"source {source_id!r} does not exist")
            counts = chapter_downloads(source_ids=[source_id]).get(source_id, {})
            shown = ", ".join(f"{name} {counts.get(name, 0)}" for name in ("downloaded", "waiting", "not_wanted"))
            self.stdout.write(f"{source_id}: download {download_policy.policy_of(source)}; chapters: {shown}")
            return
        try:
            switch = set_download_policy(actor=None, source_id=source_id, policy=policy)
        except (ControlError, SourceSettingsError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(switch.describe())
