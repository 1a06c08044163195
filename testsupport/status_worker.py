"""A worker-shaped process that publishes status through the real `StatusHandle` and `StatusPublisher`.

Tests and the fan-out benchmark need a separate OS process whose status
changes reach the server the way a crawl worker's do (row write + NOTIFY),
without crawling anything. Two modes:

- scripted (default): one JSON command per stdin line, answered "ok" once
  applied: {"op": "phase", "phase": {...}}, {"op": "chapter", ...fields},
  {"op": "pages", "chapter_id": ..., "done": n, "total": n}, {"op": "end_chapter"},
  {"op": "quit"};
- `--churn RATE --seconds S`: change the page count RATE times a second for S
  seconds, then print this process's own query count as JSON.

Run: python -m testsupport.status_worker [--churn 10 --seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from contextlib import ExitStack
from typing import Any


def _count_queries() -> dict[str, int]:
    """Count every query of every connection this process opens (the publisher runs in a thread)."""
    from django.db.backends.signals import connection_created

    counter = {"queries": 0}

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        counter["queries"] += 1
        return execute(sql, params, many, context)

    def on_connect(sender: Any, connection: Any, **kwargs: Any) -> None:
        connection.execute_wrappers.append(wrapper)

    connection_created.connect(on_connect, weak=False)
    return counter


def _scripted(status: Any) -> None:
    chapters = ExitStack()
    with chapters:
        for line in sys.stdin:
            cmd = json.loads(line)
            op = cmd.pop("op")
            if op == "quit":
                break
            if op == "phase":
                status.set_phase(cmd["phase"])
            elif op == "chapter":
                chapters.enter_context(status.begin_chapter(**cmd))
            elif op == "pages":
                status.set_chapter_pages(cmd["chapter_id"], cmd["done"], cmd.get("total"))
            elif op == "end_chapter":
                chapters.close()
            else:
                raise SystemExit(f"unknown op {op!r}")
            print("ok", flush=True)


def _churn(status: Any, rate: float, seconds: float) -> None:
    stop = threading.Event()
    ticks = int(rate * seconds)
    with status.begin_chapter(manga_id="m-bench", manga_title="Bench", chapter_id="c-bench", chapter_number=1):
        for done in range(ticks):
            status.set_chapter_pages("c-bench", done % 500, 500)
            if stop.wait(1.0 / rate):
                break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--churn", type=float, default=0.0, help="status changes per second")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    import django

    django.setup()
    counter = _count_queries()

    from jobs.worker.status.handle import StatusHandle
    from jobs.worker.status.publish import StatusPublisher

    status = StatusHandle(worker_count=2)
    with StatusPublisher(status, role="crawl", kinds=["sync_chapter_content"]):
        print("ready", flush=True)
        if args.churn > 0:
            _churn(status, args.churn, args.seconds)
        else:
            _scripted(status)
    print(json.dumps(counter), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
