"""Queue throughput: our production worker loop against PgQueuer's and Procrastinate's own workers.

    python bench/queue_throughput.py [--workers 2] [--concurrency 4] [--batch 10] [--jobs 4000] [--rounds 3]

One run, one PostgreSQL server, W worker processes x C concurrency for every
system, each system in its own fresh scratch database (dropped at the end
unless --keep). Rows, in this order:

- ours, production worker: `jobs.worker.loop.Worker.run(drain=True)`,
  the loop `crawl_worker`/`analyze_worker` run, with a no-op handler for
  `analyze_page`: concurrency C, a lease statement claims the free slots and
  the jobs found finished in one step are acked in one statement, exactly as
  in production (no batch setting). The floor: not slower than PgQueuer's
  own worker;
- ours, queue API alone: `lease(batch)` then `ack_done_many` in a loop, what
  no worker runs but the best case of the queue itself;
- PgQueuer: its `QueueManager.run(batch_size=batch, mode=drain)`, an async
  no-op entrypoint, psycopg driver (its tasks are async: no per-process cap
  below 2 x batch is accepted, so it runs uncapped);
- Procrastinate: its worker, `run_worker_async(concurrency=C, wait=False)`,
  an async no-op task (it fetches one job per query; no batch setting).

For each system: enqueue throughput one job per call (--single jobs) and
batched (chunks of 1,000), the drain of --jobs no-op jobs (processes started
and connected, then released together; jobs/s = jobs over the time from the
release to the last job recorded done, both on the database clock; --rounds
drains, the median reported since one drain of 4,000 jobs lasts under a
second and single runs vary by a fifth), the same
drain with a handler that writes one row per job, and the enqueue -> done
latency of jobs enqueued one at a time at --latency-rate while W x C workers
run. Transactions and new sessions per job come from pg_stat_database.
PgQueuer deletes each finished job (its log keeps a row); we keep done rows
until the reaper removes them; each phase starts from empty tables.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import multiprocessing as mp
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
import scratch

DB_PREFIX = "ml_queue_bench"
CHUNK = 1000
TOUCH_TABLE = "CREATE TABLE IF NOT EXISTS bench_touch (job text PRIMARY KEY)"


def server_url(args_url: str | None) -> str:
    """The PostgreSQL server to use: --pg, else DATABASE_URL's server, else local."""
    url = args_url or os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    return url.rsplit("/", 1)[0]


def scalar(dsn: str, query: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(query).fetchone()
        return row[0] if row else None


def execute(dsn: str, statements: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statements)


def db_counters(dsn: str) -> tuple[int, int]:
    """(committed transactions, sessions opened) so far in `dsn`'s database, read from elsewhere."""
    server, name = dsn.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute("SELECT xact_commit, sessions FROM pg_stat_database WHERE datname = %s", [name]).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


# --- our worker processes (spawned: each sets Django up against its scratch database) ---------


def _django(dsn: str) -> None:
    os.environ["LOG_LEVEL"] = "WARNING"  # every system runs without per-job log lines
    scratch.setup_django(dsn)


def ours_enqueue(dsn: str, jobs: int, chunk: int, results: Any) -> None:
    _django(dsn)
    from analysis.payloads import AnalyzePage
    from jobs import queue

    payloads = [AnalyzePage(page_id=uuid.uuid4()) for _ in range(jobs)]
    started = time.monotonic()
    if chunk == 1:
        for payload in payloads:
            queue.enqueue(payload)
    else:
        for i in range(0, jobs, chunk):
            queue.enqueue_many(payloads[i : i + chunk])
    results.put(time.monotonic() - started)


def _touch_handler() -> Callable[[Any, Any], None]:
    from django.db import connection

    def touch(payload: Any, ctx: Any) -> None:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_touch (job) VALUES (%s)", [str(ctx.lease.id)])

    return touch


def ours_worker(
    dsn: str, concurrency: int, batch: int, write: bool, drain: bool, ready: Any, go: Any, results: Any
) -> None:
    _django(dsn)
    from django.db import connection

    from jobs.worker.loop import Worker, WorkerConfig

    handler = _touch_handler() if write else (lambda payload, ctx: None)
    # As in production: a lease statement claims the free slots, the jobs found finished are acked together.
    config = WorkerConfig(role="bench", handlers={"analyze_page": handler}, concurrency=concurrency)
    worker = Worker(config)
    connection.ensure_connection()
    ready.put(os.getpid())
    go.wait()
    cpu = time.process_time()
    worker.run(drain=drain, install_signals=not drain)
    results.put(time.process_time() - cpu)


def queue_api_worker(
    dsn: str, concurrency: int, batch: int, write: bool, drain: bool, ready: Any, go: Any, results: Any
) -> None:
    _django(dsn)
    from datetime import timedelta

    from django.db import connection

    from jobs import queue

    connection.ensure_connection()
    ready.put(os.getpid())
    go.wait()
    cpu = time.process_time()
    while leases := queue.lease(["analyze_page"], batch, timedelta(minutes=5)):
        queue.ack_done_many(leases)
    results.put(time.process_time() - cpu)


# --- PgQueuer ------------------------------------------------------------------------------


def _quiet() -> None:
    import logging

    logging.disable(logging.WARNING)


async def _touch_pool(dsn: str, size: int) -> Any:
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(dsn, min_size=size, max_size=size, kwargs={"autocommit": True}, open=False)
    await pool.open()
    return pool


def pgqueuer_worker(
    dsn: str, concurrency: int, batch: int, write: bool, drain: bool, ready: Any, go: Any, results: Any
) -> None:
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.qm import QueueManager
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode

    _quiet()

    async def run() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        pool = await _touch_pool(dsn, 4) if write else None
        manager = QueueManager(Queries(PsycopgDriver(conn)))

        @manager.entrypoint("noop")
        async def noop(job: Any) -> None:
            if pool is not None:
                async with pool.connection() as c:
                    await c.execute("INSERT INTO bench_touch (job) VALUES (%s)", [str(job.id)])

        ready.put(os.getpid())
        await asyncio.to_thread(go.wait)
        cpu = time.process_time()
        mode = QueueExecutionMode.drain if drain else QueueExecutionMode.continuous
        await manager.run(batch_size=batch, mode=mode)
        results.put(time.process_time() - cpu)
        if pool is not None:
            await pool.close()
        await conn.close()

    asyncio.run(run())


async def _pgqueuer_queries(dsn: str) -> tuple[Any, Any]:
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.queries import Queries

    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    return conn, Queries(PsycopgDriver(conn))


def pgqueuer_enqueue(dsn: str, jobs: int, chunk: int, results: Any) -> None:
    async def run() -> None:
        conn, queries = await _pgqueuer_queries(dsn)
        started = time.monotonic()
        if chunk == 1:
            for _ in range(jobs):
                await queries.enqueue("noop", uuid.uuid4().bytes)
        else:
            for i in range(0, jobs, chunk):
                n = min(chunk, jobs - i)
                await queries.enqueue(["noop"] * n, [uuid.uuid4().bytes for _ in range(n)], [0] * n)
        results.put(time.monotonic() - started)
        await conn.close()

    asyncio.run(run())


# --- Procrastinate -------------------------------------------------------------------------


def procrastinate_app(dsn: str, pool: list[Any] | None = None) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=dsn, kwargs={}))

    @app.task(name="noop", pass_context=True)
    async def noop(context: Any) -> None:
        if pool:
            async with pool[0].connection() as c:
                await c.execute("INSERT INTO bench_touch (job) VALUES (%s)", [str(context.job.id)])

    return app


def procrastinate_worker(
    dsn: str, concurrency: int, batch: int, write: bool, drain: bool, ready: Any, go: Any, results: Any
) -> None:
    _quiet()

    async def run() -> None:
        pool = [await _touch_pool(dsn, concurrency)] if write else []
        app = procrastinate_app(dsn, pool)
        async with app.open_async():
            ready.put(os.getpid())
            await asyncio.to_thread(go.wait)
            cpu = time.process_time()
            await app.run_worker_async(concurrency=concurrency, wait=not drain, install_signal_handlers=not drain)
            results.put(time.process_time() - cpu)
        for p in pool:
            await p.close()

    asyncio.run(run())


def procrastinate_enqueue(dsn: str, jobs: int, chunk: int, results: Any) -> None:
    async def run() -> None:
        app = procrastinate_app(dsn)
        async with app.open_async():
            task = app.tasks["noop"]
            started = time.monotonic()
            if chunk == 1:
                for _ in range(jobs):
                    await task.defer_async()
            else:
                for i in range(0, jobs, chunk):
                    await task.batch_defer_async(*({} for _ in range(min(chunk, jobs - i))))
            results.put(time.monotonic() - started)

    asyncio.run(run())


# --- one system ------------------------------------------------------------------------------


@dataclass
class System:
    key: str
    name: str
    prepare: Callable[[str], None]  # schema into a fresh database
    enqueue: Callable[..., None] | None  # (dsn, jobs, chunk, results)
    worker: Callable[..., None]  # (dsn, concurrency, batch, write, drain, ready, go, results)
    completed: str  # SQL: how many jobs finished successfully
    clear: str  # SQL: empty the tables between phases
    latency: str = ""  # SQL: p50, p95 seconds from enqueue to done
    left: str = ""  # SQL: rows that must be gone after a drain (PgQueuer deletes them)
    finished_at: str = ""  # SQL: epoch of the last job's completion, on the database clock


@dataclass
class Result:
    system: System
    single_rate: float = 0.0
    batched_rate: float = 0.0
    drain: dict[str, float] = field(default_factory=dict)  # "noop"/"write" -> jobs/s
    per_job: dict[str, tuple[float, float]] = field(default_factory=dict)  # -> (xact/job, sessions)
    latency: tuple[float, float] | None = None
    cpu: dict[str, DrainCpu] = field(default_factory=dict)


def run_child(target: Callable[..., None], *args: Any) -> Any:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, results))
    proc.start()
    value = results.get(timeout=600)
    proc.join(60)
    if proc.exitcode != 0:
        raise RuntimeError(f"{target.__name__} exited with {proc.exitcode}")
    return value


def start_workers(system: System, dsn: str, args: argparse.Namespace, write: bool, drain: bool) -> tuple:
    ctx = mp.get_context("spawn")
    ready, go, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=system.worker, args=(dsn, args.concurrency, args.batch, write, drain, ready, go, results))
        for _ in range(args.workers)
    ]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=120)
    return procs, go, results


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat; (0, 0) where there is none."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


@dataclass
class DrainCpu:
    worker_secs: list[float]  # CPU seconds each worker process used from the release to its exit
    machine_busy: float  # share of all CPUs busy over the same span (PostgreSQL and every process)


def drain(
    system: System, dsn: str, args: argparse.Namespace, jobs: int, write: bool
) -> tuple[float, float, float, DrainCpu]:
    """Seconds to drain, transactions per job, sessions opened and CPU use, W processes released together."""
    procs, go, results = start_workers(system, dsn, args, write, drain=True)
    xact0, sessions0 = db_counters(dsn)
    started = float(scalar(dsn, "SELECT extract(epoch FROM clock_timestamp())"))
    busy0, total0 = cpu_jiffies()
    go.set()
    worker_cpu = [float(results.get(timeout=3600)) for _ in procs]
    busy1, total1 = cpu_jiffies()
    for proc in procs:
        proc.join(timeout=60)
        if proc.exitcode != 0:
            raise RuntimeError(f"{system.name} worker exited with {proc.exitcode}")
    xact1, sessions1 = db_counters(dsn)
    done = scalar(dsn, system.completed)
    if done != jobs:
        raise RuntimeError(f"{system.name}: expected {jobs} completed jobs, found {done}")
    if system.left and scalar(dsn, system.left):
        raise RuntimeError(f"{system.name}: jobs left in the queue after the drain")
    if write and scalar(dsn, "SELECT count(DISTINCT job) FROM bench_touch") != jobs:
        raise RuntimeError(f"{system.name}: the handler's rows do not match the jobs")
    # Until the last job was recorded done, not until the processes noticed the queue is empty: a
    # worker's own drain-exit delay (PgQueuer's is long) is not part of its throughput.
    secs = float(scalar(dsn, system.finished_at)) - started
    cpu = DrainCpu(worker_cpu, (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0)
    return secs, (xact1 - xact0) / jobs, float(sessions1 - sessions0), cpu


def latency(system: System, dsn: str, args: argparse.Namespace) -> tuple[float, float]:
    """p50/p95 enqueue -> done while W x C workers run and jobs arrive one at a time at --latency-rate."""
    procs, go, _results = start_workers(system, dsn, args, write=False, drain=False)
    go.set()
    time.sleep(1.0)  # workers booted and idle, listening
    try:
        run_child(paced_enqueue, system.key, dsn, args.latency_jobs, args.latency_rate)
        deadline = time.monotonic() + 120
        while scalar(dsn, system.completed) < args.latency_jobs:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{system.name}: latency jobs not done in time")
            time.sleep(0.1)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(10)
    with psycopg.connect(dsn) as conn:
        row = conn.execute(system.latency).fetchone()
    assert row is not None
    return float(row[0]), float(row[1])


def paced_enqueue(key: str, dsn: str, jobs: int, rate: float, results: Any) -> None:
    """Enqueue `jobs` one per call at `rate` per second (the way producers feed a running worker)."""
    enqueue_one: Callable[[], Any]
    if key == "ours":
        _django(dsn)
        from analysis.payloads import AnalyzePage
        from jobs import queue

        def enqueue_one() -> Any:
            return queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))

        _pace(enqueue_one, jobs, rate)
    elif key == "pgqueuer":

        async def run_pgq() -> None:
            conn, queries = await _pgqueuer_queries(dsn)
            await _apace(lambda: queries.enqueue("noop", uuid.uuid4().bytes), jobs, rate)
            await conn.close()

        asyncio.run(run_pgq())
    else:

        async def run_pro() -> None:
            app = procrastinate_app(dsn)
            async with app.open_async():
                task = app.tasks["noop"]
                await _apace(task.defer_async, jobs, rate)

        asyncio.run(run_pro())
    results.put(True)


def _pace(call: Callable[[], Any], jobs: int, rate: float) -> None:
    started = time.monotonic()
    for i in range(jobs):
        delay = started + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        call()


async def _apace(call: Callable[[], Any], jobs: int, rate: float) -> None:
    started = time.monotonic()
    for i in range(jobs):
        delay = started + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await call()


def bench_system(system: System, server: str, args: argparse.Namespace) -> Result:
    dsn = f"{server}/{args.db_prefix}_{system.key.replace('-', '_')}"
    scratch.recreate_database(dsn)
    result = Result(system)
    try:
        system.prepare(dsn)
        execute(dsn, TOUCH_TABLE)
        if system.enqueue is not None:
            single = min(args.single, args.jobs)
            result.single_rate = single / run_child(system.enqueue, dsn, single, 1)
            rest = args.jobs - single
            result.batched_rate = rest / run_child(system.enqueue, dsn, rest, CHUNK) if rest else 0.0
        else:
            run_child(ours_enqueue, dsn, args.jobs, CHUNK)
        for handler in ("noop", "write"):
            rounds = []
            for n in range(args.rounds):
                if handler == "write" or n > 0:  # the first no-op round drains what the enqueue phase queued
                    execute(dsn, system.clear)
                    run_child(system.enqueue or ours_enqueue, dsn, args.jobs, CHUNK)
                secs, xact_per_job, sessions, cpu = drain(system, dsn, args, args.jobs, write=handler == "write")
                rounds.append((args.jobs / secs, (xact_per_job, sessions), cpu))
            rounds.sort(key=lambda r: r[0])
            rate, result.per_job[handler], result.cpu[handler] = rounds[len(rounds) // 2]  # the median round
            result.drain[handler] = rate
            each = ", ".join(f"{r[0]:,.0f}" for r in rounds)
            print(f"  {system.name} [{handler}]: {rate:,.0f} jobs/s (median of {each})", flush=True)
            if system.enqueue is None:
                break  # the queue-API row has no handler: the no-op drain only
        if system.latency and args.latency_jobs:
            execute(dsn, system.clear)
            result.latency = latency(system, dsn, args)
    finally:
        if not args.keep:
            scratch.drop_database(dsn)
    return result


# --- the systems -------------------------------------------------------------------------------


def prepare_ours(dsn: str) -> None:
    run_child(_migrate, dsn)


def _migrate(dsn: str, results: Any) -> None:
    _django(dsn)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    results.put(True)


def prepare_pgqueuer(dsn: str) -> None:
    async def run() -> None:
        conn, queries = await _pgqueuer_queries(dsn)
        await queries.install()
        await conn.close()

    asyncio.run(run())


def prepare_procrastinate(dsn: str) -> None:
    async def run() -> None:
        app = procrastinate_app(dsn)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    asyncio.run(run())


def _p50_p95(seconds: str, source: str) -> str:
    return f"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s), percentile_cont(0.95) WITHIN GROUP (ORDER BY s) FROM (SELECT {seconds} AS s FROM {source}) t"  # noqa: E501


OURS_FINISHED = "SELECT extract(epoch FROM max(updated_at)) FROM crawler_jobs WHERE state = 'done'"


def systems(args: argparse.Namespace) -> list[System]:
    ours_done = "SELECT count(*) FROM crawler_jobs WHERE state = 'done'"
    ours_clear = "DELETE FROM crawler_jobs; TRUNCATE bench_touch"
    pgq, pro = importlib.metadata.version("pgqueuer"), importlib.metadata.version("procrastinate")
    c = args.concurrency
    return [
        System(
            "ours",
            f"ours: production Worker loop (concurrency {c})",
            prepare_ours,
            ours_enqueue,
            ours_worker,
            ours_done,
            ours_clear,
            latency=_p50_p95("extract(epoch FROM updated_at - created_at)", "crawler_jobs WHERE state = 'done'"),
            finished_at=OURS_FINISHED,
        ),
        System(
            "ours-api",
            f"ours: queue API alone (lease {args.batch} + ack_done_many)",
            prepare_ours,
            None,
            queue_api_worker,
            ours_done,
            ours_clear,
            finished_at=OURS_FINISHED,
        ),
        System(
            "pgqueuer",
            f"PgQueuer {pgq} QueueManager (batch {args.batch})",
            prepare_pgqueuer,
            pgqueuer_enqueue,
            pgqueuer_worker,
            "SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'",
            "TRUNCATE pgqueuer, pgqueuer_log, bench_touch",
            latency=_p50_p95(
                "extract(epoch FROM s.created - q.created)",
                "pgqueuer_log s JOIN pgqueuer_log q ON q.job_id = s.job_id AND q.status = 'queued'"
                " WHERE s.status = 'successful'",
            ),
            left="SELECT count(*) FROM pgqueuer",
            finished_at="SELECT extract(epoch FROM max(created)) FROM pgqueuer_log WHERE status = 'successful'",
        ),
        System(
            "procrastinate",
            f"Procrastinate {pro} worker (concurrency {c})",
            prepare_procrastinate,
            procrastinate_enqueue,
            procrastinate_worker,
            "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'",
            "TRUNCATE procrastinate_jobs CASCADE; TRUNCATE bench_touch",
            latency=_p50_p95(
                "extract(epoch FROM s.at - d.at)",
                "procrastinate_events s JOIN procrastinate_events d ON d.job_id = s.job_id AND d.type = 'deferred'"
                " WHERE s.type = 'succeeded'",
            ),
            finished_at="SELECT extract(epoch FROM max(at)) FROM procrastinate_events WHERE type = 'succeeded'",
        ),
    ]


# --- report ---------------------------------------------------------------------------------------


def report(results: list[Result], args: argparse.Namespace) -> None:
    print(
        f"\n{args.jobs} jobs, {args.workers} processes x concurrency {args.concurrency}, batch {args.batch}, "
        f"median of {args.rounds} drains, "
        f"{os.cpu_count()} CPUs; latency: {args.latency_jobs} jobs enqueued one at a time at {args.latency_rate:g}/s"
    )
    print(
        f"{'system':<54} {'no-op jobs/s':>12} {'xact/job':>8} {'sessions':>8} {'1-write jobs/s':>14} "
        f"{'xact/job':>8} {'p50 ms':>7} {'p95 ms':>7} {'enq 1/s':>8} {'enq batch/s':>11}"
    )
    for r in results:
        noop_x, noop_s = r.per_job.get("noop", (0.0, 0.0))
        write_x, _ = r.per_job.get("write", (0.0, 0.0))
        lat = r.latency
        print(
            f"{r.system.name:<54} {r.drain.get('noop', 0):>12,.0f} {noop_x:>8.2f} {noop_s:>8.0f} "
            f"{r.drain.get('write', 0):>14,.0f} {write_x:>8.2f} "
            f"{(lat[0] * 1000 if lat else 0):>7.1f} {(lat[1] * 1000 if lat else 0):>7.1f} "
            f"{r.single_rate:>8,.0f} {r.batched_rate:>11,.0f}"
        )
    print(
        "note: PgQueuer deletes each finished job (a log row stays); we keep done rows until the reaper "
        "(JOBS_DONE_RETENTION_DAYS) deletes them. Each phase starts from empty tables."
    )
    print("CPU in the no-op drain: each worker process's share of one core over the drain, machine busy share")
    for r in results:
        if "noop" in r.cpu:
            cpu, secs = r.cpu["noop"], args.jobs / r.drain["noop"]
            per_process = " ".join(f"{used / secs:.0%}" for used in cpu.worker_secs)
            print(f"  {r.system.name:<54} {per_process}; machine {cpu.machine_busy:.0%}")
    by_key = {r.system.key: r for r in results}
    ours, api = by_key.get("ours"), by_key.get("ours-api")
    if ours and api:
        overhead = 1 - ours.drain["noop"] / api.drain["noop"]
        print(f"worker overhead above the queue API: {overhead:.0%} of the queue-API figure")
    if ours:
        for key in ("pgqueuer", "procrastinate"):
            peer = by_key.get(key)
            if peer is None:
                continue
            ratios = [f"no-op drain {ours.drain['noop'] / peer.drain['noop']:.2f}x"]
            if peer.drain.get("write"):
                ratios.append(f"1-write drain {ours.drain['write'] / peer.drain['write']:.2f}x")
            ratios.append(f"enqueue single {ours.single_rate / peer.single_rate:.2f}x")
            ratios.append(f"enqueue batched {ours.batched_rate / peer.batched_rate:.2f}x")
            if ours.latency and peer.latency:
                ratios.append(f"p50 latency {ours.latency[0] / peer.latency[0]:.2f}x")
            print(f"ratio ours (production worker) / {peer.system.name}: " + ", ".join(ratios))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes per system")
    parser.add_argument("--concurrency", type=int, default=4, help="jobs at once per process")
    parser.add_argument(
        "--batch", type=int, default=10, help="jobs claimed per lease/fetch statement (queue API, PgQueuer)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="drains per system and handler; the median is reported")
    parser.add_argument("--single", type=int, default=500, help="of --jobs, how many are enqueued one per call")
    parser.add_argument("--latency-jobs", type=int, default=1000)
    parser.add_argument("--latency-rate", type=float, default=200.0, help="jobs/s enqueued in the latency phase")
    parser.add_argument("--only", default="ours,ours-api,pgqueuer,procrastinate")
    parser.add_argument("--pg", help="PostgreSQL server URL (default: DATABASE_URL's server)")
    parser.add_argument("--db-prefix", default=DB_PREFIX, help="scratch databases are <prefix>_<system>")
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    args = parser.parse_args()
    if min(args.jobs, args.workers, args.concurrency, args.batch, args.rounds) < 1 or args.single < 0:
        parser.error("--jobs, --workers, --concurrency, --batch and --rounds must be positive")
    server = server_url(args.pg)
    chosen = {key.strip() for key in args.only.split(",")}
    print(
        f"pgqueuer {importlib.metadata.version('pgqueuer')}, procrastinate "
        f"{importlib.metadata.version('procrastinate')}, psycopg {importlib.metadata.version('psycopg')}",
        flush=True,
    )
    results = [bench_system(system, server, args) for system in systems(args) if system.key in chosen]
    report(results, args)


if __name__ == "__main__":
    main()
