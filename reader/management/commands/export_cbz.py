"""`manage.py export_cbz DIR [--manga ID|SLUG|TITLE ...] [--since DATE]`: the library as CBZ files for Komga/Kavita,
one folder per series (a manga crawled from several sources is one series)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from catalog.lookup import MangaNotFound, find_manga
from catalog.signals import library_exported
from reader.export import chapters_to_export, export_library


def since_value(raw: str) -> datetime:
    """An ISO date (midnight UTC) or datetime; naive values are UTC."""
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not an ISO date or datetime such as 2024-05-01 or 2024-05-01T12:00"
        ) from None
    if len(raw) == 10:
        parsed = datetime.combine(parsed.date(), time.min)
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


class Command(BaseCommand):
    help = "Write every downloaded chapter as DIR/<Series>/<Series> - c<number> - <title>.cbz (skips unchanged files)."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path, help="where to write the library")
        parser.add_argument(
            "--manga",
            action="append",
            default=[],
            metavar="ID|SLUG|TITLE",
            help="only this manga's series: its id, slug (crimson-tide) or title, exact or partial (repeatable)",
        )
        parser.add_argument("--since", type=since_value, help="only chapters changed since this date or datetime")

    def handle(self, *args, directory: Path, manga: list[str], since: datetime | None, **options):
        if directory.exists() and not directory.is_dir():
            raise CommandError(f"{directory} exists and is not a directory")
        try:
            manga_ids = [str(find_manga(ref).id) for ref in manga]
        except MangaNotFound as exc:
            raise CommandError(f"--manga: {exc}") from exc
        directory.mkdir(parents=True, exist_ok=True)
        chapters = chapters_to_export(manga_ids, since)
        console = Console(file=self.stdout._out)
        columns = (
            TextColumn("Exporting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
        )
        with Progress(*columns, console=console, transient=False, disable=options["verbosity"] == 0) as progress:
            task = progress.add_task("", total=chapters.count())
            stats = export_library(
                directory.resolve(),
                chapters,
                lambda ch, _written: progress.update(task, advance=1, description=ch.manga.title[:40]),
            )
        console.print(
            f"{stats.written} written, {stats.skipped} unchanged, {stats.moved} moved, {stats.removed} removed"
            f" (another copy shown now), in {directory}"
        )
        # Komga/Kavita rescans (upkeep.export_hook) when settings name them; a failed one is a warning, never an error.
        changed = stats.written + stats.moved + stats.removed
        library_exported.send(self.__class__, directory=directory.resolve(), written=changed)
