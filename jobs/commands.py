"""What every worker command shares (`crawl_worker`, `analyze_worker`): its base class and its options, validated
by argparse before any database work."""

import argparse

from django.core.management.base import BaseCommand


class WorkerCommand(BaseCommand):
    """A worker command: it starts without Django's system checks.

    They look at the web process's parts (the URLconf and every view behind
    it, templates, the admin, security headers): 0.2 s of CPU at each start
    of a worker that uses none of them. `migrate` and `check` still run them
    at every deploy.
    """

    requires_system_checks: list[str] = []


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    return number


def add_loop_options(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="lease one batch, finish it, exit")
    mode.add_argument("--drain", action="store_true", help="exit when nothing is leasable and nothing is running")
