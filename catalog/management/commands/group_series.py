"""`manage.py group_series`: group the library's per-source mangas into series (`--dry-run` prints the plan only)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog import series_candidates


class Command(BaseCommand):
    help = (
        "Merge the series whose mangas match (same title or alternative title, confirmed by an author or the "
        "cover) and store weaker matches as suggestions for an operator. --dry-run prints what it would do."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="print the merges and suggestions, change nothing")
        parser.add_argument("--no-cover-hashes", action="store_true", help="do not hash stored covers first")

    def handle(self, *args: Any, **options: Any) -> None:
        # Keys and cover hashes are derived data, written even in a dry run: the plan is read from them.
        prepared = series_candidates.prepare(hash_covers=not options["no_cover_hashes"])
        plan = series_candidates.current_plan()
        out = self.stdout
        out.write(
            f"covers hashed: {prepared.hashed}, match keys written: {prepared.keyed}, pairs compared: {plan.compared}"
        )
        for merge in plan.merges:
            out.write(f"merge into {merge.target}: " + " | ".join(merge.titles))
            for reason in merge.reasons:
                out.write(f"    {reason}")
        for suggestion in plan.suggestions:
            out.write(f"suggest {suggestion.first} ~ {suggestion.second}: " + " | ".join(suggestion.titles))
            out.write(f"    {'; '.join(suggestion.reasons)}")
        for key, size in plan.skipped_blocks:
            out.write(f"skipped key {key!r}: shared by {size} mangas, too many to tell apart")
        if options["dry_run"]:
            out.write(f"dry run: {len(plan.merges)} merge(s) and {len(plan.suggestions)} suggestion(s) not made")
            return
        applied = series_candidates.apply_plan(plan)
        out.write(f"merged {len(applied.changes)} group(s); {applied.suggestions} new suggestion(s)")
