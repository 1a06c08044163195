"""Big sites on one box: every queue, operator and reader operation at two library sizes, and how it grows.

    python bench/big_site.py [--sizes 10000,100000] [--runs 7] [--keep] [--json FILE] \
        [--pg postgres://postgres@127.0.0.1:5432] [--db-prefix ml_big_site]

For each size (mangas; default 10,000 then 100,000) a scratch database
`<db-prefix>_<size>` is created through the migrations and filled inside
PostgreSQL (bench/bigsite/seed.py: 15 chapters a manga, 10 pending and 20 done
chapter jobs a manga, 10,000 dead jobs, a 2,000-chapter manga, another
source's and the analyze worker's jobs queued behind the big source's), then
VACUUM ANALYZE; each manga of the big source is a series with copies from two
mirror sources (`--copies`, default 3: mangas x 3 sources). Every operation of bench/bigsite/operations.py is called once
to warm up and then --runs times (5 when a call takes over 2 s); the median is
printed with the SQL statements of the last call. Operations that write run in
a rolled-back transaction, and the jobs table is vacuumed after them
(untimed). Last, one table: the median at each size and the growth ratio
between the two. `--sizes 10000` runs the small size alone. `--keep` leaves
the databases (a kept one that already holds its rows is vacuumed and reused,
not refilled); `--json` writes the medians for comparing runs; `--only NAME` times only the
operations whose name contains NAME (repeatable).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

import scratch
from bigsite.operations import count_whole_requests, operations, time_operation
from bigsite.seed import Size, seed
from bigsite.verify_pass import operations as verify_operations
from bigsite.verify_pass import whole_pass

DEFAULT_SIZES = "10000,100000"


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="mangas per size, comma-separated, ascending")
    parser.add_argument("--runs", type=int, default=7, help="timed calls per operation (5 to 9 is plenty)")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="server URL, no database")
    parser.add_argument("--db-prefix", default="ml_big_site")
    parser.add_argument(
        "--copies", type=int, default=3, help="sources each manga is crawled from, grouped into one series (1 to 5)"
    )
    parser.add_argument("--keep", action="store_true", help="leave the scratch databases for the next run")
    parser.add_argument("--json", help="write {size: {operation: median ms}} to this file")
    parser.add_argument(
        "--only", action="append", default=[], help="time only operations whose name contains this (repeatable)"
    )
    args = parser.parse_args()
    try:
        args.sizes = [Size(int(n), args.copies) for n in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes must be comma-separated numbers of mangas, got {args.sizes!r}")
    if any(size.mangas < 2_000 for size in args.sizes):
        parser.error(
            "--sizes: each size needs at least 2,000 mangas (the dead jobs name chapters past the queued ones)"
        )
    if not 1 <= args.copies <= 5:
        parser.error("--copies must be from 1 to 5")
    if not 1 <= args.runs <= 50:
        parser.error("--runs must be from 1 to 50")
    return args


def _already_seeded(size: Size) -> bool:
    """A kept database of this size, filled by this seed (an older seed left the jobs' source column empty)."""
    from catalog.models import Manga
    from jobs.models import Job

    if Manga.objects.count() != size.mangas + 1 + size.copy_mangas:
        return False
    return not Job.objects.filter(kind="sync_chapter_content", source_id="").exists()


def measure_size(db_url: str, size: Size, runs: int, keep: bool, only: list[str]) -> tuple[dict[str, dict], str]:
    """Fill (or reuse) the size's database and time every operation in this process; (medians, versions)."""
    from django.core.management import call_command
    from django.db import connection

    scratch.ensure_database(db_url)
    try:
        connection.close()
        connection.settings_dict["NAME"] = db_url.rsplit("/", 1)[1]
        call_command("migrate", verbosity=0)
        if _already_seeded(size):
            print(f"reusing {db_url} ({size.describe()})")
            _vacuum()  # what earlier runs' rolled-back writes left, when autovacuum is off
        else:
            began = time.perf_counter()
            print(f"filling {db_url}: {size.describe()}")
            connection.close()
            scratch.recreate_database(db_url)  # a kept database of another size, or a half-filled one
            call_command("migrate", verbosity=0)
            seed(size)
            print(f"filled in {time.perf_counter() - began:.0f} s")
        results = {}
        print(f"\n{'operation':<46} {'median ms':>10} {'runs':>5} {'queries':>8}")
        for operation in [*operations(size), *verify_operations(size)]:
            if only and not any(part in operation.name for part in only):
                continue
            timed = time_operation(operation, runs)
            if operation.writes:
                _vacuum("crawler_jobs")
            results[timed.name] = {"median_ms": timed.median_ms, "queries": timed.queries}
            print(f"{timed.name:<46} {timed.median_ms:>10.1f} {timed.runs:>5} {timed.queries:>8}", flush=True)
        if not only or any(part in "verify: whole pass" for part in only):
            whole = whole_pass()
            results["verify: whole pass"] = {"median_ms": whole["seconds"] * 1000, **whole}
            print(
                f"verify: whole pass: {whole['rows']:,} rows in {whole['seconds']:.1f} s = {whole['rows_per_s']:,.0f} "
                f"rows/s, {whole['findings']:,} findings, RSS {whole['rss_start_mb']:.0f} MB at the start, "
                f"peak +{whole['rss_growth_mb']:.1f} MB",
                flush=True,
            )
        ran_on = versions()
        connection.close()
        return results, ran_on
    finally:
        if not keep:
            scratch.drop_database(db_url)


def _vacuum(table: str = "") -> None:
    """VACUUM ANALYZE of `table` (every table when none), untimed: each operation meets the table as autovacuum keeps it, not the last one's dead rows.

    A writing operation runs in a transaction rolled back after each call, so
    every call leaves its new row versions and index entries behind as dead
    ones; on a server with autovacuum off (as here) nothing would ever clear
    them, and each run would time a more bloated table than the last.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {table}")


def print_growth(sizes: list[Size], results: dict[str, dict[str, dict]]) -> None:
    labels = [size.label for size in sizes]
    head = "".join(f"{label + ' ms':>12}" for label in labels)
    growth = f"{'growth':>8}" if len(sizes) > 1 else ""
    print(f"\n{'operation (median of the calls)':<46}{head}{growth}")
    for name in results[labels[0]]:
        row = [results[label][name]["median_ms"] for label in labels]
        cells = "".join(f"{ms:>12.1f}" for ms in row)
        ratio = f"{row[-1] / row[0]:>7.1f}x" if len(row) > 1 and row[0] > 0 else ""
        print(f"{name:<46}{cells}{ratio}")


def versions() -> str:
    from django import get_version
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
        cursor.execute("SHOW autovacuum")
        autovacuum = cursor.fetchone()[0]
    commit = subprocess.run(
        ["git", "-C", scratch.REPO_ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"Python {platform.python_version()}, Django {get_version()}, PostgreSQL {server} (autovacuum {autovacuum}), commit {commit or '?'}"


def main() -> None:
    args = arguments()
    scratch.setup_django(f"{args.pg}/{args.db_prefix}_{args.sizes[0].label}")
    count_whole_requests()
    results: dict[str, dict[str, dict]] = {}
    ran_on = ""
    for size in args.sizes:
        url = f"{args.pg}/{args.db_prefix}_{size.label}"
        print(f"\n=== {size.label}: {size.describe()} ===")
        results[size.label], ran_on = measure_size(url, size, args.runs, args.keep, args.only)
    print_growth(args.sizes, results)
    print(f"\n{ran_on}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    sys.exit(main())
