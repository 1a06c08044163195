"""PostgreSQL query plans as lists of nodes, for tests that check which scans a statement uses."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection

# How the statement is run: `cursor.execute` alone, or with its planner settings around it (jobs.queries.explain_with_settings).
Fetch = Callable[[Any, str, dict[str, Any]], list[tuple]]


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def plan_nodes(statement: str, params: dict[str, Any], fetch: Fetch | None = None) -> list[dict[str, Any]]:
    """Every node of `EXPLAIN (FORMAT JSON) statement`, run bare or through `fetch`."""
    explain = f"EXPLAIN (FORMAT JSON) {statement}"
    with connection.cursor() as cursor:
        if fetch is not None:
            document = fetch(cursor, explain, params)[0][0]
        else:
            cursor.execute(explain, params)
            document = cursor.fetchone()[0]
    if isinstance(document, str):
        document = json.loads(document)
    return list(_nodes(document[0]["Plan"]))
