"""Run a `manage.py` command with every SQL statement it sends counted and timed, for `crawl.py --profile`.

    CRAWL_BENCH_SQL_COUNTS=out.json python bench/crawling/count_sql.py crawl_worker --drain ...

The count is taken where every statement passes, psycopg's cursor (Django's
cursors, the queue's own statements and the LISTEN connection alike), so it
needs neither `pg_stat_statements` (a server-wide preload) nor the server's
statement log. Each thread keeps its own tally (no lock on the hot path);
the tallies are merged and written as JSON when the command exits:
statement text -> [count, seconds in execute, of which in autocommit (each
its own transaction)], plus explicit commits and rollbacks.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_WHITESPACE = re.compile(r"\s+")
_PLACEHOLDER_LISTS = re.compile(r"%s(?:, %s)+")

_tallies: list[dict[str, list[float]]] = []
_local = threading.local()
_ends = {"commit": 0, "rollback": 0}


def _tally() -> dict[str, list[float]]:
    tally = getattr(_local, "tally", None)
    if tally is None:
        tally = _local.tally = {}
        _tallies.append(tally)  # list.append is atomic under the GIL
    return tally


def _text(query: Any, cursor: Any) -> str:
    if isinstance(query, str):
        return query
    if isinstance(query, bytes):
        return query.decode(errors="replace")
    try:
        return query.as_string(cursor.connection)
    except Exception:
        return f"<{type(query).__name__}>"


def _counted(method: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return method(self, query, *args, **kwargs)
        finally:
            row = _tally().setdefault(_text(query, self), [0, 0.0, 0])
            row[0] += 1
            row[1] += time.perf_counter() - started
            if self.connection.autocommit:
                row[2] += 1

    return run


def _ending(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def run(self: Any) -> Any:
        _ends[name] += 1
        return method(self)

    return run


def install() -> None:
    import psycopg

    for cls in (psycopg.Cursor, psycopg.ServerCursor):
        for name in ("execute", "executemany"):
            if name in vars(cls):
                setattr(cls, name, _counted(vars(cls)[name]))
    psycopg.Connection.commit = _ending(psycopg.Connection.commit, "commit")  # type: ignore[method-assign]
    psycopg.Connection.rollback = _ending(psycopg.Connection.rollback, "rollback")  # type: ignore[method-assign]


def merged() -> dict[str, list[float]]:
    """Every thread's tally, statements with the same text after folding whitespace and `IN (%s, ...)` lists."""
    out: dict[str, list[float]] = {}
    for tally in list(_tallies):
        for text, (count, secs, autocommit) in list(tally.items()):
            key = _PLACEHOLDER_LISTS.sub("%s, ...", _WHITESPACE.sub(" ", text).strip())
            row = out.setdefault(key, [0, 0.0, 0])
            row[0] += count
            row[1] += secs
            row[2] += autocommit
    return out


def _write(path: str) -> None:
    with open(path, "w") as out:
        json.dump({"statements": merged(), **_ends}, out)


def main() -> None:
    path = os.environ["CRAWL_BENCH_SQL_COUNTS"]
    sys.path.insert(0, REPO_ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    install()
    atexit.register(_write, path)
    from django.core.management import execute_from_command_line

    execute_from_command_line(["manage.py", *sys.argv[1:]])


if __name__ == "__main__":
    main()
