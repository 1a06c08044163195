"""Reconcile at scale: a 100k-ref catalog with ~90% already stored.

    python bench/reconcile_scale.py [--refs 100000] [--present 0.9] [--database-url postgres://...]

Creates (or recreates) a scratch PostgreSQL database (default
`mangalord_bench_reconcile`; never the one in DATABASE_URL), migrates it,
inserts the present share of the catalog as Manga + MangaSource rows with
`bulk_create`, then runs `crawler.passes.reconcile.run_reconcile` over an in-memory
source in a fresh child process, so its peak RSS is not inflated by the
seeding. Prints wall time, peak RSS and the number of SQL queries.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import scratch

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_reconcile"
SOURCE_ID = "bench"
SEED_CHUNK = 5000
MIB = 1024 * 1024


def key_of(i: int) -> str:
    return f"manga-{i:07d}"


def is_present(i: int, present: float) -> bool:
    """Deterministic spread: in every 100 consecutive refs, the first `present*100` are stored."""
    return (i % 100) < round(present * 100)


class GeneratedSource:
    """A lightweight Source: list pages of refs generated on demand, nothing else held in memory."""

    source_id = SOURCE_ID

    def __init__(self, refs: int, per_page: int = 50) -> None:
        self.refs = refs
        self.per_page = per_page

    def list_page(self, n: int):  # type: ignore[no-untyped-def]
        from sources.base import SourceMangaRef

        start = (n - 1) * self.per_page
        stop = min(start + self.per_page, self.refs)
        refs = [
            SourceMangaRef(key=key_of(i), url=f"http://bench.invalid/manga/{key_of(i)}", title=f"Bench manga {i}")
            for i in range(start, stop)
        ]
        return refs, stop < self.refs

    def manga_detail(self, ref):  # type: ignore[no-untyped-def]
        raise AssertionError("reconcile must not visit detail pages")

    def chapter_pages(self, chapter):  # type: ignore[no-untyped-def]
        raise AssertionError("reconcile must not visit chapters")

    def open_image(self, url):  # type: ignore[no-untyped-def]
        raise AssertionError("reconcile must not fetch images")

    def close(self) -> None:
        pass


def seed(refs: int, present: float) -> int:
    from django.core.management import call_command
    from django.db import connection

    from catalog.models import Manga, MangaSource, Source
    from catalog.series import with_own_series

    call_command("migrate", verbosity=0)
    source = Source.objects.create(id=SOURCE_ID, name="Bench", kind="html", base_url="http://bench.invalid/")
    stored = 0
    for start in range(0, refs, SEED_CHUNK):
        indexes = [i for i in range(start, min(start + SEED_CHUNK, refs)) if is_present(i, present)]
        mangas = Manga.objects.bulk_create(with_own_series([Manga(title=f"Bench manga {i}") for i in indexes]))
        MangaSource.objects.bulk_create(
            [
                MangaSource(manga=m, source=source, source_manga_key=key_of(i), url=f"http://bench.invalid/manga/{i}")
                for m, i in zip(mangas, indexes, strict=True)
            ]
        )
        stored += len(indexes)
    # A long-lived table has planner statistics; a freshly bulk-loaded one has
    # none until autovacuum comes by, and the planner would then scan every
    # row of the source instead of probing the (source, key) unique index.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return stored


def peak_rss_bytes() -> int:
    """This process's RSS high-water mark.

    VmHWM where /proc has it: getrusage's ru_maxrss also carries the peak of
    the image this process was exec'd from (here the seeding parent), so it
    would report the parent's peak, not the reconcile's.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark (Linux), so getrusage reports this run's own peak.

    Without it the peak is Django's import-time high point, which hides what
    the reconcile itself needs.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def measure(refs: int) -> None:
    """Child process: run one reconcile and print its figures."""
    import psutil
    from django.db import connection

    from catalog.models import Source
    from crawler.passes.reconcile import BATCH_SIZE, run_reconcile
    from jobs.models import Job

    queries = 0

    def count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    source_row = Source.objects.get(id=SOURCE_ID)
    process = psutil.Process()
    for label in ("first run (enqueues every missing manga)", "second run (every missing manga already queued)"):
        queries = 0
        peak_was_reset = reset_peak_rss()
        rss_now = process.memory_info().rss
        with connection.execute_wrapper(count):
            started = time.perf_counter()
            stats = run_reconcile(source_row, GeneratedSource(refs))
            elapsed = time.perf_counter() - started
        rss_peak = peak_rss_bytes()
        jobs = Job.objects.filter(kind="sync_manga").count()
        print(f"\n{label}")
        print(f"  refs walked          {stats.walked:>10,}")
        print(f"  missing              {stats.missing:>10,}")
        print(f"  enqueued             {stats.enqueued:>10,}   (sync_manga rows now: {jobs:,})")
        print(f"  skipped              {stats.skipped:>10,}")
        print(f"  batch size           {BATCH_SIZE:>10,}")
        print(f"  wall time            {elapsed:>10.2f} s   ({stats.walked / elapsed:,.0f} refs/s)")
        print(f"  SQL queries          {queries:>10,}   (key lookups and INSERTs, per batch)")
        print(f"  RSS at start         {rss_now / MIB:>10.1f} MiB")
        print(f"  RSS at end           {process.memory_info().rss / MIB:>10.1f} MiB")
        scope = "during this run" if peak_was_reset else "of the process, imports included"
        print(f"  peak RSS             {rss_peak / MIB:>10.1f} MiB   ({scope})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--refs", type=int, default=100_000)
    parser.add_argument("--present", type=float, default=0.9, help="share of refs already stored (0..1)")
    parser.add_argument("--database-url", default=DEFAULT_DB_URL, help="scratch database, dropped and recreated")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 0 <= args.present <= 1 or args.refs < 1:
        parser.error("--refs must be positive and --present within 0..1")
    if args.measure:
        scratch.setup_django(args.database_url)
        measure(args.refs)
        return
    scratch.recreate_database(args.database_url)
    scratch.setup_django(args.database_url)
    started = time.perf_counter()
    stored = seed(args.refs, args.present)
    print(f"seeded {stored:,} of {args.refs:,} refs as MangaSource rows in {time.perf_counter() - started:.1f} s")
    child = [sys.executable, __file__, "--measure", "--refs", str(args.refs), "--database-url", args.database_url]
    sys.exit(subprocess.call(child))


if __name__ == "__main__":
    main()
