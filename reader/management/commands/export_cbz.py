"""`manage.py export_cbz DIR [--manga ID ...] [--since DATE]`: the library as CBZ files for Komga/Kavita."""

from __future__ import annotations

import argparse
import uuid
from datetime import UTC, datetime, time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from catalog.models import Manga
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


def manga_id(raw: str) -> str:
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a manga id (a UUID)") from None


class Command(BaseCommand):
    help = "Write every downloaded chapter as DIR/<Series>/<Series> - c<number> - <title>.cbz (skips unchanged files)."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path, help="where to write the library")
        parser.add_argument("--manga", type=manga_id, action="append", default=[], help="only this manga (repeatable)")
        parser.add_argument("--since", type=since_value, help="only chapters changed since this date or datetime")

    def handle(self, *args, directory: Path, manga: list[str], since: datetime | None, **options):
        if directory.exists() and not directory.is_dir():
            raise CommandError(f"{directory} exists and is not a directory")
        missing = set(manga) - {str(i) for i in Manga.objects.filter(id__in=manga).values_list("id", flat=True)}
        if missing:
            raise CommandError(f"no manga with id {', '.join(sorted(missing))}")
        directory.mkdir(parents=True, exist_ok=True)
        chapters = chapters_to_export(manga, since)
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
        console.print(f"{stats.written} written, {stats.skipped} unchanged, {stats.moved} moved, in {directory}")
