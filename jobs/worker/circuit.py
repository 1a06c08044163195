"""Circuit breaker for a worker's leasing: pure decisions over consecutive failures and time.

During a source outage every job fails the same way. Without a breaker the
worker would lease job after job and burn each one's attempts (and dead-letter
the whole backlog once `max_attempts` runs out). After `threshold` consecutive
outage-shaped failures the breaker opens: the worker stops leasing until the
cool-down passes. Then it is half-open: one more outage failure re-opens it at
once, one success closes it.

Only failures that say "the source is down" count (`counts_toward_circuit`):
a 404 for one manga or one rejected image is that job's problem, not an
outage, and must not pause everything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from jobs.errors import Unavailable


class JobTimedOut(Exception):
    """A job ran past `JOBS_JOB_TIMEOUT_SECS`. A source that hangs is as down as one that refuses."""


@dataclass(frozen=True)
class CircuitState:
    consecutive_failures: int = 0
    open_until: datetime | None = None


def counts_toward_circuit(error: BaseException) -> bool:
    """True for failures that indicate the source itself is unavailable."""
    return isinstance(error, Unavailable | JobTimedOut | ConnectionError | TimeoutError)


def open_until(consecutive_failures: int, threshold: int, cooldown: timedelta, now: datetime) -> datetime | None:
    """When a breaker with this many consecutive failures reopens leasing: None while below the threshold."""
    if consecutive_failures >= threshold:
        return now + cooldown
    return None


def is_open(state: CircuitState, now: datetime) -> bool:
    """Leasing is paused while the cool-down has not passed."""
    return state.open_until is not None and now < state.open_until


def after_failure(state: CircuitState, *, threshold: int, cooldown: timedelta, now: datetime) -> CircuitState:
    """Record one outage-shaped failure.

    The count is not reset when the breaker trips: after the cool-down it
    stays at the threshold (half-open), so the first failure of the probe job
    re-opens the breaker instead of letting another `threshold` jobs fail.
    """
    failures = state.consecutive_failures + 1
    tripped = open_until(failures, threshold, cooldown, now)
    if tripped is None:
        return replace(state, consecutive_failures=failures)
    if is_open(state, now):
        # Jobs already in flight when it tripped are failing too; keep the
        # original window rather than extending it for each of them.
        return replace(state, consecutive_failures=failures)
    return CircuitState(consecutive_failures=failures, open_until=tripped)


def after_success(state: CircuitState) -> CircuitState:
    """Any success closes the breaker."""
    return CircuitState()
