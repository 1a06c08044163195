"""Status fan-out: database queries per second behind 1, 10 and 100 SSE subscribers.

    python bench/status_fanout.py [--subscribers 1,10,100] [--seconds 10] [--churn 10] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_fanout]

Recreates a scratch PostgreSQL database (never the one in DATABASE_URL),
migrates it, starts a real Daphne server on 127.0.0.1:<ephemeral> and a
worker process (`testsupport.status_worker --churn`) that changes its
published status `--churn` times a second through the real `StatusHandle` ->
`StatusPublisher` path (row write + NOTIFY). For each subscriber count it
opens that many `GET /api/v1/admin/crawler/stream/` connections as a staff
user, holds them for `--seconds`, and then closes them all. It reports:

- the server's own figure: the broadcaster logs, when its last subscriber
  leaves, how many composes and SQL queries it ran in that period (counted
  with `connection.execute_wrapper` around every query it makes);
- the database's figure: committed transactions per second in the scratch
  database (`pg_stat_database.xact_commit`, read from another database so
  the reads do not count), which includes the worker's own writes and the
  per-connection login lookups;
- status events each subscriber received per second (they all get the same
  payloads).

Flat means the first two columns do not grow with the subscriber count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

import scratch
from scratch import REPO_ROOT

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_fanout"
STREAM = "/api/v1/admin/crawler/stream/"
RUN_ENDED = re.compile(
    r"status broadcaster run ended seconds=([\d.]+) composes=(\d+) queries=(\d+) signals=(\d+) published=(\d+)"
)


def staff_session() -> str:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password", is_staff=True)
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def committed_transactions(db_url: str) -> int:
    import psycopg

    parts = urlsplit(db_url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [parts.path.lstrip("/")]
        ).fetchone()
    return int(row[0])


async def measure(
    base_url: str, session_key: str, count: int, seconds: float, db_url: str, warmup: float = 3.0
) -> dict[str, float]:
    """Open `count` streams, let them settle, measure for `seconds`, close them."""
    import httpx

    counts = [0] * count
    limits = httpx.Limits(max_connections=count + 5, max_keepalive_connections=0)
    async with httpx.AsyncClient(
        base_url=base_url, cookies={"sessionid": session_key}, timeout=None, limits=limits
    ) as client:

        async def one(i: int) -> None:
            async with client.stream("GET", STREAM) as response:
                response.raise_for_status()
                async for line in response.aiter_lines():
                    if line.startswith("event: status"):
                        counts[i] += 1

        tasks = [asyncio.create_task(one(i)) for i in range(count)]
        # The logins of `count` new connections are not the steady state.
        await asyncio.sleep(warmup)
        events_before = sum(counts)
        xact_before = await asyncio.to_thread(committed_transactions, db_url)
        started = time.monotonic()
        await asyncio.sleep(seconds)
        elapsed = time.monotonic() - started
        xact_after = await asyncio.to_thread(committed_transactions, db_url)
        events = sum(counts) - events_before
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if failed:
        raise RuntimeError(f"{len(failed)} streams failed: {failed[0].exception()!r}")
    return {"db_xact_per_s": (xact_after - xact_before) / elapsed, "events_each_per_s": events / count / elapsed}


def wait_for_run_end(server, seen: int, timeout: float = 15.0) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        matches = list(RUN_ENDED.finditer(server.log()))
        if len(matches) > seen:
            return matches[seen]
        time.sleep(0.1)
    raise RuntimeError(f"the server did not report the end of its broadcaster run:\n{server.log()[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description="Status fan-out: DB queries/s behind N SSE subscribers.")
    parser.add_argument("--subscribers", default="1,10,100", help="comma-separated subscriber counts")
    parser.add_argument("--seconds", type=float, default=10.0, help="measurement window per count")
    parser.add_argument("--churn", type=float, default=10.0, help="worker status changes per second")
    parser.add_argument("--database-url", default=DEFAULT_DB_URL, help="scratch database, dropped and recreated")
    args = parser.parse_args()
    counts = [int(n) for n in args.subscribers.split(",")]

    scratch.recreate_database(args.database_url)
    scratch.setup_django(args.database_url)
    session_key = staff_session()

    from django.db import connection

    from testsupport.live_server import start_daphne

    connection.close()
    env = dict(os.environ, DATABASE_URL=args.database_url, PYTHONPATH=REPO_ROOT, LOG_LEVEL="INFO")
    server = start_daphne(env, cwd=REPO_ROOT)
    total_secs = len(counts) * (args.seconds + 8) + 10
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "testsupport.status_worker",
            "--churn",
            str(args.churn),
            "--seconds",
            str(total_secs),
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    rows = []
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        for i, n in enumerate(counts):
            window = asyncio.run(measure(server.url, session_key, n, args.seconds, args.database_url))
            run = wait_for_run_end(server, i)
            run_secs, composes, queries = float(run.group(1)), int(run.group(2)), int(run.group(3))
            rows.append(
                {
                    "subscribers": n,
                    "server_queries_per_s": queries / run_secs,
                    "composes_per_s": composes / run_secs,
                    **window,
                }
            )
            time.sleep(2)  # let the statistics collector settle between windows
    finally:
        worker.terminate()
        worker.wait(10)
        server.stop()

    print(
        f"\nStatus fan-out: worker changing status {args.churn:g}/s, {args.seconds:g} s per window, "
        "one Daphne process\n"
    )
    header = f"{'subscribers':>11}  {'server queries/s':>16}  {'composes/s':>10}  {'DB xact/s (all)':>15}  {'events/s each':>13}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['subscribers']:>11}  {row['server_queries_per_s']:>16.1f}  {row['composes_per_s']:>10.1f}  "
            f"{row['db_xact_per_s']:>15.1f}  {row['events_each_per_s']:>13.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
