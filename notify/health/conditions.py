"""Source health as named conditions, and which of them start or end between two checks: pure, tested directly.

A condition's key says what and where (`jobs.mostly_dead:mangadex`, `session.expired:target`, `disk.floor`); its
first part, up to the dot, is the probe that reports it. An alert fires when a key appears and the condition is kept
while the key stays; it is forgotten when the key goes, so the same trouble coming back fires again. A probe that
failed this time reports nothing: its conditions are kept as they were, neither cleared nor fired.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Condition:
    key: str
    message: str


def probe_of(key: str) -> str:
    return key.split(".", 1)[0]


@dataclass(frozen=True)
class Transitions:
    started: tuple[str, ...]
    cleared: tuple[str, ...]


def transitions(held: Collection[str], now: Mapping[str, str], failed_probes: Collection[str] = ()) -> Transitions:
    """Keys that start holding (alert) and keys that stopped (forget), given what held before and holds now."""
    started = tuple(sorted(key for key in now if key not in held))
    cleared = tuple(sorted(key for key in held if key not in now and probe_of(key) not in failed_probes))
    return Transitions(started, cleared)


@dataclass(frozen=True)
class SourceJobCounts:
    """A source's jobs settled or failing within the health window."""

    done: int = 0
    dead: int = 0
    # Pending again after a failed attempt (waiting out their backoff).
    retrying: int = 0


def source_job_conditions(counts: Mapping[str, SourceJobCounts], min_failures: int) -> list[Condition]:
    """Per source: unreachable (at least `min_failures` failed, nothing succeeded), else mostly dead jobs
    (at least `min_failures` dead, more dead than done)."""
    conditions = []
    for source_id, c in sorted(counts.items()):
        if c.done == 0 and c.dead + c.retrying >= min_failures:
            conditions.append(
                Condition(
                    f"jobs.unreachable:{source_id}",
                    f"source {source_id} looks unreachable: {c.dead + c.retrying} job(s) failed in a row and none "
                    "succeeded (see the dead jobs on the dashboard)",
                )
            )
        elif c.dead >= min_failures and c.dead > c.done:
            conditions.append(
                Condition(
                    f"jobs.mostly_dead:{source_id}",
                    f"source {source_id} has mostly dead jobs: {c.dead} dead against {c.done} done recently",
                )
            )
    return conditions
