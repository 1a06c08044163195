"""What a handler may raise to tell the worker how to settle its job (see `jobs.worker.outcomes`).

Apps subclass these for their own failures (`sources.errors`): the engine
judges the class, never the app.
"""

from __future__ import annotations

from datetime import datetime


class JobCancelled(Exception):
    """Raised inside a handler when its cancel event is set (shutdown, timeout, lost lease)."""


class PermanentError(Exception):
    """A deterministic failure: running the job again cannot succeed until someone changes something.

    Dead-lettered at once with its message as the reason, never retried.
    """


class RetryLater(Exception):
    """The job's target asked to come back later: rescheduled at `until` without burning an attempt.

    The queue bounds how often that may happen to one job (JOBS_MAX_DEFERRALS),
    so a target that always says "later" still ends in dead-letter.
    """

    def __init__(self, message: str, *, until: datetime) -> None:
        super().__init__(message)
        self.until = until


class Paused(Exception):
    """Not the job's fault and not worth retrying until an operator acts (a login wall).

    The lease is released (no attempt burnt) and the worker role's `on_paused`
    hook decides what else stops (the crawler pauses that source's jobs).
    """


class Unavailable(Exception):
    """What the job talks to is down (connection refused, 5xx): counts toward the circuit breaker."""


class Busy(Exception):
    """What the job needs is spoken for by other jobs right now (a source's request budget).

    Not a failure: the lease is released at once with no attempt spent, so the
    thread goes to other work; the role's `momentary_exclusions` hook may keep
    the job's group out of leasing for a moment.
    """


class Held(Exception):
    """Something every job of some kinds needs has run out (free disk under its floor).

    Not the job's fault: the lease is released (no attempt spent) and the
    role's `on_held` hook decides which kinds wait (`leasable_kinds`) until
    there is room again.
    """
