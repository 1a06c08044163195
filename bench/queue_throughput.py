"""Queue throughput: our crawler_jobs queue against Procrastinate and PgQueuer on one PostgreSQL.

    python bench/queue_throughput.py --jobs 20000 --workers 4 --batch 50

Each system gets its own scratch database on the same server (dropped at the
end unless --keep). The workload is the same for all: N no-op jobs enqueued,
then W worker processes started, released together, draining until nothing
is left. Enqueue time and drain time are measured and printed separately;
jobs/s is N over drain time (first worker released to last worker finished).

- ours: `lease(["analyze_page"], batch)` then `ack_done_many` (and, as a second
  row, `ack_done` per job), AnalyzePage payloads with random page ids;
- Procrastinate: its own worker (`run_worker_async(wait=False)`) in each
  process, an async no-op task, psycopg connector, concurrency per process
  from --peer-concurrency (default 1, like our one-job-at-a-time worker);
- PgQueuer: a QueueManager per process in drain mode with batch_size=batch,
  an async no-op entrypoint, psycopg driver.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
import scratch
from scratch import REPO_ROOT

DB_PREFIX = "ml_queue_bench"
CHUNK = 1000


# --- scratch databases -----------------------------------------------------------------


def server_url(args_url: str | None) -> str:
    """The PostgreSQL server to use: --pg, else DATABASE_URL's server, else local."""
    url = args_url or os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    return url.rsplit("/", 1)[0]


SYNCHRONOUS_COMMIT = "on"


def fresh_database(server: str, name: str) -> str:
    """A fresh scratch database on `server`; every session in it uses the chosen synchronous_commit."""
    dsn = f"{server}/{name}"
    scratch.recreate_database(dsn, settings={"synchronous_commit": SYNCHRONOUS_COMMIT})
    return dsn


def scalar(dsn: str, query: str) -> Any:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
        return row[0] if row else None


# --- worker processes --------------------------------------------------------------------


def ours_worker(dsn: str, batch: int, ack: str, ready: Any, go: Any, results: Any) -> None:
    scratch.setup_django(dsn)
    from datetime import timedelta

    from django.db import connection

    from crawler import queue

    connection.ensure_connection()
    ready.put(os.getpid())
    go.wait()
    done = 0
    while leases := queue.lease(["analyze_page"], batch, timedelta(minutes=5)):
        if ack == "many":
            done += queue.ack_done_many(leases)
        else:
            done += sum(queue.ack_done(lease) for lease in leases)
    results.put((time.monotonic(), done))


def procrastinate_app(dsn: str) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=dsn, kwargs={}))

    @app.task(name="noop")
    async def noop() -> None:
        return None

    return app


def procrastinate_worker(dsn: str, concurrency: int, ready: Any, go: Any, results: Any) -> None:
    import logging

    logging.disable(logging.WARNING)

    async def run() -> None:
        app = procrastinate_app(dsn)
        async with app.open_async():
            ready.put(os.getpid())
            await asyncio.to_thread(go.wait)
            await app.run_worker_async(concurrency=concurrency, wait=False, install_signal_handlers=False)
        results.put((time.monotonic(), None))

    asyncio.run(run())


def pgqueuer_worker(dsn: str, batch: int, ready: Any, go: Any, results: Any) -> None:
    import logging

    from pgqueuer.db import PsycopgDriver
    from pgqueuer.qm import QueueManager
    from pgqueuer.types import QueueExecutionMode

    logging.disable(logging.WARNING)

    async def run() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        manager = QueueManager(PsycopgDriver(conn))

        @manager.entrypoint("noop")
        async def noop(job: Any) -> None:
            return None

        ready.put(os.getpid())
        await asyncio.to_thread(go.wait)
        await manager.run(batch_size=batch, mode=QueueExecutionMode.drain)
        await conn.close()
        results.put((time.monotonic(), None))

    asyncio.run(run())


@dataclass
class Outcome:
    name: str
    jobs: int
    enqueue_secs: float
    drain_secs: float

    @property
    def rate(self) -> float:
        return self.jobs / self.drain_secs


def drain_with(workers: int, target: Callable[..., None], args: tuple) -> float:
    """Start W worker processes, release them together, return seconds until the last one finished."""
    ctx = mp.get_context("spawn")
    ready, go, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, ready, go, results)) for _ in range(workers)]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=120)
    started = time.monotonic()
    go.set()
    finished = [results.get(timeout=3600)[0] for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        if proc.exitcode != 0:
            raise RuntimeError(f"{target.__name__} exited with {proc.exitcode}")
    return max(finished) - started


# --- the three systems -----------------------------------------------------------------------


def bench_ours(server: str, args: argparse.Namespace, ack: str, keep: bool) -> Outcome:
    name = f"{DB_PREFIX}_ours"
    dsn = fresh_database(server, name)
    try:
        code = (
            "import sys, time, uuid;"
            f"sys.path.insert(0, {REPO_ROOT!r});"
            "import django; django.setup();"
            "from django.core.management import call_command; call_command('migrate', verbosity=0);"
            "from crawler import queue; from crawler.queue.payloads import AnalyzePage;"
            "t = time.monotonic();"
            f"[queue.enqueue_many(AnalyzePage(page_id=uuid.uuid4()) for _ in range(min({CHUNK}, {args.jobs} - i)))"
            f" for i in range(0, {args.jobs}, {CHUNK})];"
            "print(time.monotonic() - t)"
        )
        enqueue_secs = float(_run_django_snippet(dsn, code))
        drain = drain_with(args.workers, ours_worker, (dsn, args.batch, ack))
        done = scalar(dsn, "SELECT count(*) FROM crawler_jobs WHERE state = 'done' AND lease_generation = 1")
        _check(f"ours ({ack})", done, args.jobs)
        label = "ours (lease + ack_done_many)" if ack == "many" else "ours (lease + ack_done per job)"
        return Outcome(label, args.jobs, enqueue_secs, drain)
    finally:
        if not keep:
            scratch.drop_database(dsn)


def _run_django_snippet(dsn: str, code: str) -> str:
    import subprocess

    env = dict(os.environ, DATABASE_URL=dsn, DJANGO_SETTINGS_MODULE="mangalord.settings")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO_ROOT, check=True, capture_output=True, text=True
    )
    return out.stdout.strip().splitlines()[-1]


def bench_procrastinate(server: str, args: argparse.Namespace, keep: bool) -> Outcome:
    name = f"{DB_PREFIX}_procrastinate"
    dsn = fresh_database(server, name)
    try:

        async def prepare() -> float:
            app = procrastinate_app(dsn)
            async with app.open_async():
                await app.schema_manager.apply_schema_async()
                task = app.tasks["noop"]
                started = time.monotonic()
                for i in range(0, args.jobs, CHUNK):
                    await task.batch_defer_async(*({} for _ in range(min(CHUNK, args.jobs - i))))
                return time.monotonic() - started

        enqueue_secs = asyncio.run(prepare())
        drain = drain_with(args.workers, procrastinate_worker, (dsn, args.peer_concurrency))
        done = scalar(dsn, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'")
        _check("procrastinate", done, args.jobs)
        return Outcome(
            f"Procrastinate 3.5 (concurrency {args.peer_concurrency}/process)", args.jobs, enqueue_secs, drain
        )
    finally:
        if not keep:
            scratch.drop_database(dsn)


def bench_pgqueuer(server: str, args: argparse.Namespace, keep: bool) -> Outcome:
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.queries import Queries

    name = f"{DB_PREFIX}_pgqueuer"
    dsn = fresh_database(server, name)
    try:

        async def prepare() -> float:
            conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
            queries = Queries(PsycopgDriver(conn))
            await queries.install()
            started = time.monotonic()
            for i in range(0, args.jobs, CHUNK):
                n = min(CHUNK, args.jobs - i)
                await queries.enqueue(["noop"] * n, [uuid.uuid4().bytes for _ in range(n)], [0] * n)
            elapsed = time.monotonic() - started
            await conn.close()
            return elapsed

        enqueue_secs = asyncio.run(prepare())
        drain = drain_with(args.workers, pgqueuer_worker, (dsn, args.batch))
        done = scalar(dsn, "SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'")
        left = scalar(dsn, "SELECT count(*) FROM pgqueuer")
        _check("pgqueuer", done, args.jobs)
        _check("pgqueuer (left in queue)", left, 0)
        return Outcome(f"PgQueuer 0.24 (batch {args.batch})", args.jobs, enqueue_secs, drain)
    finally:
        if not keep:
            scratch.drop_database(dsn)


def _check(name: str, got: int, want: int) -> None:
    if got != want:
        raise RuntimeError(f"{name}: expected {want} completed jobs, found {got}")


# --- report -------------------------------------------------------------------------------------


def oldest_snapshot_secs(server: str) -> float:
    """Age of the oldest open snapshot on the server: while one is held, no dead row can be pruned.

    Every drained job leaves dead index entries behind; a long transaction
    anywhere on the server (another database's test run, an idle session)
    keeps them from being cleaned up, and every lease and fetch then steps
    over them. The figure is printed so runs can be compared fairly.
    """
    query = (
        "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0) FROM pg_stat_activity "
        "WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid()"
    )
    return float(scalar(f"{server}/postgres", query))


def report(outcomes: list[Outcome], args: argparse.Namespace) -> None:
    print(
        f"\n{args.jobs} no-op jobs, {args.workers} worker processes, batch {args.batch}, "
        f"synchronous_commit={args.synchronous_commit}, {os.cpu_count()} CPUs"
    )
    print(f"{'system':<44} {'enqueue s':>10} {'enqueue/s':>10} {'drain s':>9} {'drain jobs/s':>13}")
    for o in outcomes:
        print(
            f"{o.name:<44} {o.enqueue_secs:>10.2f} {o.jobs / o.enqueue_secs:>10.0f} {o.drain_secs:>9.2f} {o.rate:>13.0f}"
        )
    ours = [o for o in outcomes if o.name.startswith("ours")]
    peers = [o for o in outcomes if not o.name.startswith("ours")]
    for mine in ours:
        for peer in peers:
            print(f"ratio {mine.name} / {peer.name}: drain {mine.rate / peer.rate:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--peer-concurrency", type=int, default=1, help="Procrastinate concurrency per process")
    parser.add_argument("--repeat", type=int, default=1, help="runs per system; the median drain is reported")
    parser.add_argument("--only", default="ours,ours-single,procrastinate,pgqueuer")
    parser.add_argument("--pg", help="PostgreSQL server URL (default: DATABASE_URL's server)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    parser.add_argument(
        "--synchronous-commit",
        choices=["on", "off"],
        default="on",
        help="off takes the WAL flush out of every commit, for all systems alike, to show CPU and round-trip cost",
    )
    args = parser.parse_args()
    global SYNCHRONOUS_COMMIT
    SYNCHRONOUS_COMMIT = args.synchronous_commit
    if args.jobs < 1 or args.workers < 1 or args.batch < 1 or args.repeat < 1:
        parser.error("--jobs, --workers, --batch and --repeat must be positive")
    server = server_url(args.pg)
    runners: dict[str, Callable[[], Outcome]] = {
        "ours": lambda: bench_ours(server, args, "many", args.keep),
        "ours-single": lambda: bench_ours(server, args, "single", args.keep),
        "procrastinate": lambda: bench_procrastinate(server, args, args.keep),
        "pgqueuer": lambda: bench_pgqueuer(server, args, args.keep),
    }
    outcomes = []
    print(f"oldest open snapshot on the server at start: {oldest_snapshot_secs(server):.0f}s", flush=True)
    for key in args.only.split(","):
        if key not in runners:
            parser.error(f"--only: unknown system {key!r} (choose from {', '.join(runners)})")
        runs = [runners[key]() for _ in range(args.repeat)]
        for run in runs:
            print(f"  {run.name}: enqueue {run.enqueue_secs:.2f}s, drain {run.drain_secs:.2f}s", flush=True)
        median = statistics.median(r.drain_secs for r in runs)
        outcomes.append(Outcome(runs[0].name, args.jobs, statistics.median(r.enqueue_secs for r in runs), median))
    print(f"oldest open snapshot on the server at end: {oldest_snapshot_secs(server):.0f}s")
    report(outcomes, args)


if __name__ == "__main__":
    main()
