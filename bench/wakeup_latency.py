"""Wake-up latency: how long an enqueued job waits before an idle worker leases it.

    python bench/wakeup_latency.py --samples 200

One worker process sits idle in `JobListener.wait` (LISTEN); the parent
enqueues one AnalyzePage job at a time and measures from just before
`enqueue` to the moment the worker's `lease` returned it (both on
CLOCK_MONOTONIC, which is system-wide on Linux). The worker acks each job and
reports back before the next one is enqueued, after a short random idle gap so
every sample starts from a worker that is really waiting. With --poll SECS the
worker ignores NOTIFY and polls instead, for comparison with the fallback.
Runs against its own scratch PostgreSQL database (dropped at the end).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import time
import uuid
from typing import Any

import scratch
from queue_throughput import fresh_database, server_url

DB_NAME = "ml_queue_bench_wakeup"


def idle_worker(dsn: str, poll: float | None, ready: Any, stop: Any, leased: Any) -> None:
    scratch.setup_django(dsn)
    from datetime import timedelta

    from jobs import queue, wakeup

    with wakeup.JobListener(["analyze_page"]) as listener:
        ready.put(os.getpid())
        while not stop.is_set():
            leases = queue.lease(["analyze_page"], 1, timedelta(minutes=1))
            if leases:
                at = time.monotonic()
                queue.ack_done_many(leases)
                leased.put(at)
                continue
            if poll is None:
                listener.wait(timeout=1.0)
            else:
                stop.wait(poll)


def measure(dsn: str, samples: int, poll: float | None) -> list[float]:
    scratch.setup_django(dsn)
    from django.core.management import call_command

    from analysis.payloads import AnalyzePage
    from jobs import queue

    call_command("migrate", verbosity=0)
    ctx = mp.get_context("spawn")
    ready, stop, leased = ctx.Queue(), ctx.Event(), ctx.Queue()
    worker = ctx.Process(target=idle_worker, args=(dsn, poll, ready, stop, leased))
    worker.start()
    ready.get(timeout=120)
    latencies = []
    try:
        for _ in range(samples):
            time.sleep(random.uniform(0.02, 0.05))  # let the worker settle into its wait
            started = time.monotonic()
            queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
            latencies.append(leased.get(timeout=60) - started)
    finally:
        stop.set()
        worker.join(timeout=30)
    return latencies


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--poll", type=float, help="poll every SECS instead of LISTEN (the fallback mode)")
    parser.add_argument("--pg", help="PostgreSQL server URL (default: DATABASE_URL's server)")
    args = parser.parse_args()
    if args.samples < 1 or (args.poll is not None and args.poll <= 0):
        parser.error("--samples and --poll must be positive")
    server = server_url(args.pg)
    dsn = fresh_database(server, DB_NAME)
    try:
        latencies = measure(dsn, args.samples, args.poll)
    finally:
        scratch.drop_database(dsn)
    mode = f"polling every {args.poll}s" if args.poll else "LISTEN/NOTIFY"
    ms = [v * 1000 for v in latencies]
    print(f"enqueue -> lease latency, idle worker, {mode}, {len(ms)} samples, {os.cpu_count()} CPUs")
    print(
        f"p50 {percentile(ms, 50):.1f} ms   p95 {percentile(ms, 95):.1f} ms   "
        f"max {max(ms):.1f} ms   mean {statistics.mean(ms):.1f} ms"
    )


if __name__ == "__main__":
    main()
