"""What the latency and memory benchmarks share: timed requests, RSS readings, child runs, library arguments.

Benchmarks run as `python bench/<name>.py`, so this folder is on sys.path and
they import this module as `measure`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psutil
import scratch

WARM_UP_REQUESTS = 3


@dataclass(frozen=True)
class Timing:
    p50_ms: float
    p95_ms: float
    queries: int
    response: Any  # the last response, for the caller's own columns


def time_get(client: Any, url: str, params: Mapping[str, Any], requests: int, **headers: str) -> Timing:
    """GET `url` through Django's test client: warm up, then time `requests` calls and count the last one's queries."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(WARM_UP_REQUESTS):
        client.get(url, params, **headers)
    samples = []
    for _ in range(requests):
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            response = client.get(url, params, **headers)
            samples.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.content[:200])
    return Timing(statistics.median(samples), statistics.quantiles(samples, n=20)[-1], len(queries), response)


def library_arguments(doc: str | None, default_db_url: str, *, mangas: int = 100_000) -> argparse.Namespace:
    """The command line of the benchmarks that seed a large library: size, request count, scratch database."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mangas", type=int, default=mangas)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--database-url", default=default_db_url)
    parser.add_argument("--keep", action="store_true", help="leave the scratch database for the next run")
    args = parser.parse_args()
    if args.mangas < 1 or args.requests < 2:
        parser.error("--mangas must be >= 1 and --requests >= 2")
    return args


@contextmanager
def migrated_scratch(db_url: str, *, keep: bool) -> Iterator[None]:
    """A migrated scratch database with Django set up against it; dropped afterwards unless `keep`."""
    scratch.ensure_database(db_url)
    try:
        scratch.setup_django(db_url)
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        yield
        connection.close()
    finally:
        if not keep:
            scratch.drop_database(db_url)


def peak_rss_mb() -> float:
    """VmHWM, the peak RSS of this process image. (getrusage's ru_maxrss would do, except that
    Linux carries it across fork+exec, so a child would report the parent's peak.)"""
    return process_peak_rss_mb("self")


def process_peak_rss_mb(pid: int | str) -> float:
    """VmHWM of process `pid` ("self": this one)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status (this benchmark needs Linux)")


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / (1024 * 1024)


def process_rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / (1024 * 1024)


def run_json_child(script: str, args: Sequence[str], env: Mapping[str, str]) -> dict:
    """Run `script` in a fresh interpreter and return the JSON object its last output line holds."""
    out = subprocess.run([sys.executable, script, *args], env=dict(env), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_memory_rows(rows: Sequence[tuple[str, dict]], *, size_column: str) -> None:
    """One line per child: bytes handled, RSS before, peak RSS and the growth between them."""
    width = max(len(label) for label, _ in rows) + 2
    print(f"{'case':{width}} {size_column:>13} {'RSS before':>11} {'peak RSS':>9} {'growth':>8}")
    for label, row in rows:
        growth = row["peak_rss_mb"] - row["rss_before_mb"]
        print(
            f"{label:{width}} {row['size']:>13,} {row['rss_before_mb']:>9.1f}MB "
            f"{row['peak_rss_mb']:>7.1f}MB {growth:>6.1f}MB"
        )


def print_flatness(label: str, tiny: dict, large: dict) -> None:
    print(f"peak RSS difference large vs tiny ({label}): {large['peak_rss_mb'] - tiny['peak_rss_mb']:+.1f} MB")
