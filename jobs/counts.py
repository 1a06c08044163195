"""How many jobs of each kind are pending, running and dead: the figures the dashboard and the stream read.

One statement (`count_jobs` in queries.sql) whose cost does not grow with the
backlog on PostgreSQL: a group of more than COUNT_EXACT_UP_TO jobs is the
planner's estimate, never below that bound, and is listed in
`counts[kind]["estimated"]` so the dashboard marks it.
"""

from __future__ import annotations

import json
from typing import Any

from jobs import kinds, queries
from jobs.models import JobState

COUNTED_STATES = (JobState.PENDING, JobState.RUNNING, JobState.DEAD)

# A (kind, state) group is counted exactly up to this many jobs; a bigger one is the planner's estimate.
COUNT_EXACT_UP_TO = 10_000


def queue_counts() -> dict[str, Any]:
    """`counts[kind][state]` for the in-flight and dead states of every registered kind (and any other found), zeros included."""
    counts: dict[str, Any] = {kind: {state.value: 0 for state in COUNTED_STATES} for kind in kinds.names()}
    params = {"kinds": queries.array(counts), "limit": COUNT_EXACT_UP_TO + 1}
    for kind, state, n in queries.run("count_jobs", params):
        group = counts.setdefault(kind, {s.value: 0 for s in COUNTED_STATES})
        if n > COUNT_EXACT_UP_TO:
            n = max(_estimated(kind, state), COUNT_EXACT_UP_TO)
            group.setdefault("estimated", []).append(state)
        group[state] = n
    return counts


def _estimated(kind: str, state: str) -> int:
    plan = queries.run("estimate_jobs", {"kind": kind, "state": state})[0][0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])
