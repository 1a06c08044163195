"""`manage.py disk_floor [FLOOR | --clear]`: show or set, at run time, the free space page downloads keep.

Without arguments it prints the floor in force (the operator's, or
CRAWLER_MIN_FREE_DISK), the free space under MEDIA_ROOT and whether page
downloads are paused. FLOOR is a size as CRAWLER_MIN_FREE_DISK takes it
(`5GiB`, `500MB`, `5%`, `0` for none); running workers pick it up within a
second, no restart. `--clear` returns to CRAWLER_MIN_FREE_DISK. Audited
(console.control.disk_floor).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog import disk
from console.control.disk_floor import set_disk_floor
from console.control.errors import ControlError
from crawler.passes import disk_guard


class Command(BaseCommand):
    help = "Show or set the free disk space below which page downloads pause (overrides CRAWLER_MIN_FREE_DISK)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("floor", nargs="?", help="a size (5GiB, 500MB), a share of the disk (5%%), or 0")
        parser.add_argument("--clear", action="store_true", help="drop the run-time floor: CRAWLER_MIN_FREE_DISK")

    def handle(self, *args: Any, **options: Any) -> None:
        floor, clear = options["floor"], options["clear"]
        if floor is not None and clear:
            raise CommandError("give a floor or --clear, not both")
        if floor is not None or clear:
            try:
                set_disk_floor(actor=None, floor=None if clear else floor)
            except ControlError as exc:
                raise CommandError(str(exc)) from exc
        current, set_by = disk_guard.current_floor()
        line = f"disk floor {current} (set by {set_by})"
        if settings.STORAGE_BACKEND == "filesystem":
            space = disk.media_space(str(settings.MEDIA_ROOT))
            line += f"; {disk.format_bytes(space.free)} free of {disk.format_bytes(space.total)}"
        paused = disk_guard.storage_paused()
        self.stdout.write(line + ("; " + paused if paused else "; page downloads run"))
