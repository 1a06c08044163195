"""The many-sources mode of `bench/crawl.py`: N sources at R requests/s each, two worker processes at once.

One nginx serves the same site on N ports, each port the base URL of its own
Source (`rate_limit` R; `burst` and `max_concurrency` at their defaults), so
nginx's access log tells the sources apart by port. The sources are added
with `add_source` (no dry run, so the log holds only the crawl), a metadata
pass is enqueued for each, and two `crawl_worker` processes run as they do
in production until the queue holds nothing pending or running; then they
get SIGTERM and must exit 0.
"""

from __future__ import annotations

import signal
import subprocess
import time

import psycopg

from crawling import procstat, product, rates, serve, site
from crawling.run import Run, per_k

MANY_WORKERS = 2


def many_sources(run: Run) -> None:
    args = run.args
    ports = serve.free_ports(args.sources)
    ids = {port: f"bench-{n + 1:02d}" for n, port in enumerate(ports)}
    sites = []
    for port in ports:
        root = run.work / f"site-{port}"
        site.write_site(root, f"http://127.0.0.1:{port}", run.plan, run.images)
        sites.append((port, root))
    nginx = serve.static_sites(run.work / "nginx", sites, access_log=True)
    runner = run.product()
    try:
        run.fresh_database(runner)
        add_sources(runner, ids, args.rate)
        runner.manage("metadata_pass", "--enqueue")
        print(
            f"{args.sources} sources x {args.rate:g} requests/s,"
            f" {MANY_WORKERS} x crawl_worker --workers {args.concurrency} ...",
            flush=True,
        )
        started = time.time()
        sampler = crawl_until_empty(run, runner, nginx)
    finally:
        nginx.stop()
    verified = run.verify(runner, list(ids.values()))
    from sources.politeness.rules import DEFAULT_BURST  # Django is set up now

    log = [entry for entry in serve.read_access_log(nginx.access_log) if entry.at >= started]
    report_many(run, ids, log, DEFAULT_BURST, sampler, verified)


def add_sources(runner: product.Product, ids: dict[int, str], rate: float) -> None:
    """`add_source` for each port, in one process (one Django start instead of N)."""
    calls = [
        f"call_command(*{product.add_source_args(sid, f'http://127.0.0.1:{port}', {'rate_limit': rate}, dry_run=False)!r})"
        for port, sid in ids.items()
    ]
    runner.manage("shell", "-c", "\n".join(["from django.core.management import call_command", *calls]))


def crawl_until_empty(run: Run, runner: product.Product, nginx: serve.Nginx) -> procstat.Sampler:
    """The workers, running as in production until no job is pending or running; then SIGTERM, exit 0."""
    workers: list[subprocess.Popen] = []
    with psycopg.connect(run.db_url, autocommit=True) as watch:
        own = watch.execute("SELECT pg_backend_pid()").fetchone()
        sampler = procstat.Sampler(run.admin_dsn, run.database, nginx=nginx.pids(), ignore={own[0] if own else 0})
        try:
            for _ in range(MANY_WORKERS):
                workers.append(runner.start_worker("--no-schedule", "--workers", str(run.args.concurrency)))
                sampler.watch(workers[-1].pid)
            while product.open_jobs(watch) > 0:
                if any(w.poll() is not None for w in workers):
                    raise SystemExit(f"a crawl worker exited early; the end of {runner.log}:\n{runner.tail()}")
                time.sleep(0.5)
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
            for worker in workers:
                usage = procstat.wait_with_usage(worker)
                sampler.settle("ours", worker.pid, usage)
                if usage.code != 0:
                    raise SystemExit(f"crawl_worker exited {usage.code} after SIGTERM; see {runner.log}")
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
            sampler.stop()
    return sampler


def report_many(
    run: Run,
    ids: dict[int, str],
    log: list[serve.Access],
    burst: int,
    sampler: procstat.Sampler,
    verified: product.Verified,
) -> None:
    limit = run.args.rate
    times = {port: [e.at for e in log if e.port == port] for port in ids}
    by_source = {port: rates.source_rate(times[port], rate=limit, burst=burst) for port in ids}
    window_secs = rates.WINDOW_SECS
    print(f"\n| source | requests | active s | requests/s | best {window_secs:g} s, /s | |")
    print("|---|---:|---:|---:|---:|---|")
    for port, sid in ids.items():
        r = by_source[port]
        flag = "OVER its limit" if r.over else (f"UNDER {rates.UNDER * limit:g}/s" if r.under else "ok")
        print(f"| {sid} | {r.requests:,} | {r.span:.1f} | {r.rate:.2f} | {r.peak_window / window_secs:.1f} | {flag} |")
    total = len(log)
    span = max(e.at for e in log) - min(e.at for e in log)
    target = rates.UNDER * limit * len(ids)
    print(f"\naggregate: {total:,} requests in {span:.1f} s = {total / span:.1f} requests/s (target {target:g})")
    window = rates.common_window(by_source.values())
    if window:
        inside = sum(1 for e in log if window[0] <= e.at <= window[1])
        length = window[1] - window[0]
        print(
            f"aggregate while all {len(ids)} sources were being crawled ({length:.1f} s): {inside / length:.1f} requests/s"
        )
    over = [ids[p] for p, r in by_source.items() if r.over]
    under = [ids[p] for p, r in by_source.items() if r.under]
    print(f"over their limit: {', '.join(over) or 'none'}; more than 10 % under: {', '.join(under) or 'none'}")
    ours, pg = sampler.groups["ours"].cpu, sampler.groups["postgres"].cpu
    print(f"CPU: {ours:.1f} s ours + {pg:.1f} s PostgreSQL = {per_k(ours + pg, total):.2f} s per 1,000 requests")
    rss = ", ".join(f"{s.name} {s.peak_rss_mb:.1f} MB" for s in sampler.groups["ours"].processes.values())
    print(f"peak RSS by process: {rss}")
    print(f"verified: {verified.pages:,} stored pages across {len(ids)} sources byte-identical to the site (sha256)")
