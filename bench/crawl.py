"""Crawl benchmark: our crawl worker against aria2c on the same static Madara site, served by nginx.

    python bench/crawl.py [--pages 3000] [--concurrency 8] [--processes P] [--profile]
    python bench/crawl.py --sources 20 --rate 5 [--pages 200]

One source (the default): a Madara-theme site of --pages JPEG pages (mean
~285 KiB, rendered once into --cache-dir) is served by nginx on a free
127.0.0.1 port. aria2c fetches every page URL with --concurrency downloads
at once; then our product crawls the same site as an operator would:
`add_source --preset madara` (its dry run included; rate limit lifted with
--set rate_limit/burst/max_concurrency), a foreground `metadata_pass`, then
`crawl_worker --drain --workers C --processes P` (P: one per core, at most
C, as docs/install.md#cores recommends; printed) with analysis off, on a scratch
PostgreSQL database created by the migrations. Printed: pages/s of both and
their ratio, CPU seconds per 1,000 pages (ours, and our PostgreSQL backends,
from /proc), peak RSS, the versions compared. Every file aria2c wrote and
every page we stored is checked against the site's sha256; a page missing
or different fails the run.

--profile runs the worker under py-spy (a speedscope file and a text summary)
with every SQL statement counted, and reports statements and transactions a
page: its figures carry the profiler's cost, so take speed from a plain run.

--sources N --rate R: N sources at once (one site on N ports, each its own
Source with rate_limit R, burst and max_concurrency left at their defaults),
two `crawl_worker --workers C` processes until the queue is empty (C by
default enough for every source at once: a job thread asks one source at a
time). Printed:
the request rate each source got, from nginx's access log, the aggregate,
and any source over its limit or more than 10 % under it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import scratch
from crawling import procstat, product, profiling, serve, site
from crawling.many import MANY_WORKERS, many_sources
from crawling.run import Run, per_k, server_url, versions

DB_PREFIX = "ml_crawl_bench"
LIFTED = {"rate_limit": 1000, "burst": 1000, "max_concurrency": 64}
MANY_PAGES = 200


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--pages", type=int, help=f"pages on the site (default 3000; per source with --sources: {MANY_PAGES})"
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        help="aria2c -j and crawl_worker --workers (default 8; with --sources: enough job threads in the two "
        "workers for every source at once, plus two each)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        help="crawl_worker --processes: the --concurrency job threads shared by this many processes (default: "
        "as docs/install.md#cores recommends, one per core, at most --concurrency; 1 with --profile)",
    )
    parser.add_argument(
        "--sources", type=int, default=1, help="sources crawled at once (the many-sources mode when > 1)"
    )
    parser.add_argument("--rate", type=float, default=5.0, help="each source's rate_limit with --sources")
    parser.add_argument("--profile", action="store_true", help="py-spy on the worker and SQL statements counted")
    parser.add_argument("--pg", help="PostgreSQL server URL (default: DATABASE_URL's server, else 127.0.0.1:5432)")
    parser.add_argument("--db-prefix", default=DB_PREFIX, help="scratch database name prefix")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mangalord-bench"
    parser.add_argument(
        "--cache-dir", type=Path, default=cache, help="rendered images and profiles (default %(default)s)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database and the run's directory")
    args = parser.parse_args()
    args.pages = args.pages or (MANY_PAGES if args.sources > 1 else 3000)
    if args.concurrency is None:
        # A job thread asks one source at a time: N sources at their limits at once need N threads.
        args.concurrency = 8 if args.sources == 1 else max(8, -(-args.sources // MANY_WORKERS) + 2)
    if args.pages < 1 or args.concurrency < 1 or args.sources < 1 or args.rate <= 0:
        parser.error("--pages, --concurrency and --sources must be at least 1, --rate above 0")
    if args.processes is None:
        args.processes = 1 if args.profile else max(1, min(os.cpu_count() or 1, args.concurrency))
    if not 1 <= args.processes <= args.concurrency:
        parser.error("--processes must be between 1 and --concurrency")
    if args.profile and args.processes > 1:
        parser.error("--profile samples one worker process: leave out --processes or give 1")
    if args.profile and args.sources > 1:
        parser.error("--profile profiles the one-source crawl; leave out --sources")
    tools = ["nginx"] + (["aria2c"] if args.sources == 1 else []) + (["py-spy"] if args.profile else [])
    missing = [tool for tool in tools if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}")]
    if missing:
        parser.error(
            f"needs {', '.join(missing)} (apt-get install nginx-light aria2; pip install -r bench/requirements.txt)"
        )
    return args


# --- one source: aria2c, then ours -------------------------------------------------------------


@dataclass(frozen=True)
class Downloaded:
    """aria2c's run: wall time, its CPU (rusage), nginx's CPU meanwhile, its peak RSS."""

    wall: float
    cpu: float
    nginx_cpu: float
    peak_rss_mb: float


@dataclass(frozen=True)
class Crawled:
    """Our drain: wall time, CPU of the worker and of its PostgreSQL backends, and what the database saw."""

    wall: float
    metadata_secs: float
    cpu: float
    system_cpu: float
    pg_cpu: float
    nginx_cpu: float
    backends: int
    sessions: int
    transactions: int
    peak_rss_mb: list[tuple[str, float]]
    verified: product.Verified
    start_cpu: float  # an idle `crawl_worker --drain` (start and exit, nothing to do): ours + its PostgreSQL
    start_pg_cpu: float

    @property
    def worker_peak_rss_mb(self) -> float:
        return max(mb for name, mb in self.peak_rss_mb if name == "crawl_worker")


def run_aria2c(run: Run, base_url: str, nginx: serve.Nginx) -> Downloaded:
    paths = run.plan.image_paths()
    input_file, out_dir = run.work / "aria2c.txt", run.work / "aria2c"
    input_file.write_text(serve.aria2c_input(base_url, paths))
    os.sync()  # each timed phase starts with no writeback pending from what came before
    sampler = procstat.Sampler(run.admin_dsn, None, nginx=nginx.pids())
    started = time.monotonic()
    command = serve.aria2c_command(input_file, out_dir, run.args.concurrency)
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=procstat.die_with_parent)
    sampler.watch(process.pid)
    usage = procstat.wait_with_usage(process)
    wall = time.monotonic() - started
    sampler.settle("ours", process.pid, usage)
    sampler.stop()
    if usage.code != 0:
        raise SystemExit(f"aria2c failed ({usage.code})")
    got = site.sha256_files(out_dir, paths)
    wrong = [p for p in paths if got[p] != run.digests[p]]
    if wrong:
        raise SystemExit(f"VERIFICATION FAILED: aria2c's copy of {len(wrong)} pages differs, e.g. {wrong[:3]}")
    shutil.rmtree(out_dir)
    peak = sampler.groups["ours"].processes[process.pid].peak_rss_mb
    return Downloaded(wall, usage.cpu, sampler.groups["nginx"].cpu, peak)


def run_ours(run: Run, base_url: str, nginx: serve.Nginx, profile_dir: Path | None) -> Crawled:
    runner = run.product()
    run.fresh_database(runner)
    runner.manage(*product.add_source_args("bench", base_url, LIFTED))
    start_cpu, start_pg_cpu = idle_worker_cpu(run, runner)
    metadata_secs = runner.manage("metadata_pass", "--source", "bench")
    before = product.database_counters(run.admin_dsn, run.database)
    os.sync()
    sampler = procstat.Sampler(run.admin_dsn, run.database, nginx=nginx.pids())
    wrap, extra_env = None, {}
    if profile_dir is not None:
        wrap = profiling.pyspy_command(profile_dir / "crawl_worker.speedscope.json")
        extra_env = {"CRAWL_BENCH_SQL_COUNTS": str(profile_dir / "sql.json")}
    started = time.monotonic()
    worker = runner.start_worker(*worker_args(run.args), wrap=wrap, **extra_env)
    sampler.watch(worker.pid)
    usage = procstat.wait_with_usage(worker)
    wall = time.monotonic() - started
    if wrap is None:
        sampler.settle("ours", worker.pid, usage)  # exact; under py-spy the sampled worker is its child
    sampler.stop()
    after = product.database_counters(run.admin_dsn, run.database)
    if usage.code != 0:
        raise SystemExit(f"crawl_worker failed ({usage.code}); the end of {runner.log}:\n{runner.tail()}")
    ours = sampler.groups["ours"]
    return Crawled(
        wall=wall,
        metadata_secs=metadata_secs,
        cpu=ours.cpu,
        system_cpu=ours.system,
        pg_cpu=sampler.groups["postgres"].cpu,
        nginx_cpu=sampler.groups["nginx"].cpu,
        backends=len(sampler.groups["postgres"].processes),
        sessions=sampler.sessions_opened,
        transactions=after["xact_commit"] - before["xact_commit"],
        peak_rss_mb=[(seen.name, seen.peak_rss_mb) for seen in ours.processes.values()],
        verified=run.verify(runner, ["bench"]),
        start_cpu=start_cpu,
        start_pg_cpu=start_pg_cpu,
    )


def worker_args(args: argparse.Namespace) -> tuple[str, ...]:
    return ("--drain", "--no-schedule", "--workers", str(args.concurrency), "--processes", str(args.processes))


def idle_worker_cpu(run: Run, runner: product.Product) -> tuple[float, float]:
    """The CPU of a worker's start and exit alone: `crawl_worker --drain` with nothing queued; (ours, PostgreSQL).

    What a long-running worker pays once (imports, Django's set-up, the
    role's), printed beside the drain's figure so the per-page cost shows
    without it.
    """
    sampler = procstat.Sampler(run.admin_dsn, run.database)
    worker = runner.start_worker(*worker_args(run.args))
    sampler.watch(worker.pid)
    usage = procstat.wait_with_usage(worker)
    sampler.settle("ours", worker.pid, usage)
    sampler.stop()
    if usage.code != 0:
        raise SystemExit(
            f"an idle crawl_worker --drain failed ({usage.code}); the end of {runner.log}:\n{runner.tail()}"
        )
    return sampler.groups["ours"].cpu, sampler.groups["postgres"].cpu


def one_source(run: Run) -> None:
    args, pages = run.args, run.plan.pages
    (port,) = serve.free_ports(1)
    base_url = f"http://127.0.0.1:{port}"
    site.write_site(run.work / "site", base_url, run.plan, run.images)
    nginx = serve.static_sites(run.work / "nginx", [(port, run.work / "site")])
    profile_dir = None
    if args.profile:
        profile_dir = args.cache_dir / "profiles" / time.strftime("%Y%m%d-%H%M%S")
        profile_dir.mkdir(parents=True)
    try:
        print(f"aria2c -j {args.concurrency}: fetching {pages:,} pages ...", flush=True)
        aria = run_aria2c(run, base_url, nginx)
        print(f"ours: add_source, metadata pass, crawl_worker {' '.join(worker_args(args))} ...", flush=True)
        ours = run_ours(run, base_url, nginx, profile_dir)
    finally:
        nginx.stop()
    report_one(run, aria, ours, profile_dir)


def report_one(run: Run, aria: Downloaded, ours: Crawled, profile_dir: Path | None) -> None:
    args, pages = run.args, run.plan.pages
    aria_rate, ours_rate = pages / aria.wall, pages / ours.wall
    total_cpu = ours.cpu + ours.pg_cpu
    if profile_dir is not None:
        print("\nPROFILED: py-spy and the SQL counter slow the worker; take speed and CPU from a run without --profile")
    print(f"\n| {pages:,} pages, concurrency {args.concurrency} | pages/s | wall s | CPU per 1,000 pages | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| aria2c -j {args.concurrency} | {aria_rate:.1f} | {aria.wall:.1f} | {per_k(aria.cpu, pages):.2f} s"
        f" | {aria.peak_rss_mb:.1f} MB |"
    )
    print(
        f"| crawl_worker --drain --workers {args.concurrency} --processes {args.processes} | {ours_rate:.1f} ({ours_rate / aria_rate:.2f}x)"
        f" | {ours.wall:.1f} | {per_k(total_cpu, pages):.2f} s ({per_k(ours.cpu, pages):.2f} ours"
        f" + {per_k(ours.pg_cpu, pages):.2f} PostgreSQL) | {ours.worker_peak_rss_mb:.1f} MB |"
    )
    print(
        f"\nours / aria2c: {ours_rate / aria_rate:.2f}x the pages/s at {total_cpu / aria.cpu:.1f}x the CPU a page;"
        f" ours is {per_k(ours.cpu - ours.system_cpu, pages):.2f} s user + {per_k(ours.system_cpu, pages):.2f} s"
        " system per 1,000 pages"
    )
    steady = total_cpu - ours.start_cpu - ours.start_pg_cpu
    print(
        f"of which the worker's start and exit: {ours.start_cpu + ours.start_pg_cpu:.2f} s"
        f" ({ours.start_cpu:.2f} ours + {ours.start_pg_cpu:.2f} PostgreSQL, measured on an idle"
        f" crawl_worker --drain: imports, Django and the role's set-up, once per process);"
        f" without it {per_k(steady, pages):.2f} s per 1,000 pages"
    )
    verified = ours.verified
    span = (verified.last_stored - verified.first_stored).total_seconds()
    print(
        f"first to last stored page: {span:.1f} s ({pages / max(span, 1e-9):.1f} pages/s; the wall time also holds"
        " the worker's start and exit)"
    )
    print(
        f"metadata pass before the drain (not in the figures): {ours.metadata_secs:.1f} s, {len(run.plan.mangas())} mangas"
    )
    print("peak RSS by process: " + ", ".join(f"{name} {mb:.1f} MB" for name, mb in ours.peak_rss_mb))
    print(
        f"PostgreSQL during the drain: {ours.transactions:,} transactions committed"
        f" ({ours.transactions / pages:.1f} a page), {ours.sessions} sessions opened, {ours.backends} backends measured"
    )
    if ours.sessions > ours.backends:
        print(f"  ({ours.sessions - ours.backends} session(s) lived less than one look: their CPU is not counted)")
    print(
        f"nginx CPU per 1,000 pages (the site, not counted above): {per_k(aria.nginx_cpu, pages):.2f} s serving"
        f" aria2c, {per_k(ours.nginx_cpu, pages):.2f} s serving us"
    )
    print(f"verified: aria2c's {pages:,} files and our {verified.pages:,} stored pages are byte-identical to the site")
    if profile_dir is not None:
        summary = "\n\n".join(
            [
                profiling.summarize_statements(profile_dir / "sql.json", pages, ours.transactions),
                profiling.summarize_speedscope(profile_dir / "crawl_worker.speedscope.json", str(product.REPO_ROOT)),
            ]
        )
        (profile_dir / "summary.txt").write_text(summary + "\n")
        print(f"\n{summary}\n\nprofile: {profile_dir}/crawl_worker.speedscope.json, summary: {profile_dir}/summary.txt")


def main() -> None:
    args = arguments()
    # A plain `kill` unwinds like Ctrl-C: nginx stopped, the scratch database dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    plan = site.SitePlan(pages=args.pages)
    spec = site.ImageSpec()
    images = site.ensure_images(plan, spec, args.cache_dir)
    server = server_url(args.pg)
    database = f"{args.db_prefix}_{'many' if args.sources > 1 else 'one'}"
    work = Path(tempfile.mkdtemp(prefix="crawl-bench-"))
    digests = site.sha256_files(images, plan.image_paths())
    mean_kib = sum((images / p).stat().st_size for p in plan.image_paths()) / len(digests) / 1024
    chapters = sum(len(m.chapters) for m in plan.mangas())
    print(f"site: {plan.pages:,} pages (mean {mean_kib:.1f} KiB) in {chapters} chapters of {len(plan.mangas())} mangas")
    print(f"versions: {versions(server, aria2c=args.sources == 1)}")
    print(
        f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; run directory {work}"
    )
    run = Run(args, work, server, database, plan, images, digests)
    try:
        one_source(run) if args.sources == 1 else many_sources(run)
    finally:
        if not args.keep:
            scratch.drop_database(run.db_url)
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept: database {database}, run directory {work}")


if __name__ == "__main__":
    main()
