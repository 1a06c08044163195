"""Serve the built-in demo manga site in the foreground (for a manual crawl or a second process in tests)."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand

from demo.site import start_demo_site


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return number


def _range(value: str) -> tuple[int, int]:
    """'3-5' -> (3, 5)."""
    try:
        low, high = (int(part) for part in value.split("-", 1)) if "-" in value else (int(value),) * 2
    except ValueError as exc:
        raise argparse.ArgumentTypeError("expected N or MIN-MAX") from exc
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError("expected 1 <= MIN <= MAX")
    return low, high


class Command(BaseCommand):
    help = "Serve the demo manga site on 127.0.0.1 until interrupted. Faults: POST /__control/faults."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=_non_negative, default=0, help="0 picks a free port (printed)")
        parser.add_argument("--mangas", type=_non_negative, default=30)
        parser.add_argument("--chapters", type=_range, default=(3, 5), help="chapters per manga, N or MIN-MAX")
        parser.add_argument("--pages", type=_range, default=(3, 5), help="pages per chapter, N or MIN-MAX")
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        site = start_demo_site(
            options["host"],
            options["port"],
            mangas=options["mangas"],
            chapters=options["chapters"],
            pages=options["pages"],
            seed=options["seed"],
        )
        # The first line is machine-readable: a parent process reads the URL from it.
        self.stdout.write(f"demo site: {site.base_url}")
        self.stdout.flush()
        try:
            stop.wait()
        finally:
            site.stop()
