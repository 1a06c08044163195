"""Options every worker command shares (`crawl_worker`, `analyze_worker`), validated by argparse before any database work."""

import argparse


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
