"""The job runner: leased jobs on a bounded pool of threads, each with a cancel event and a deadline.

The loop hands it a lease and the handler; the runner records the job as in
flight, runs it on a pool thread (`jobs.worker.pool`) and, when the handler
returns or raises, marks it finished and sets the loop's wake event. Who
settles a job is decided once: the loop (finished, overdue, stopping) and the
heartbeat (lease lost) each `claim` it first, and only the first claim wins,
so a job is acked, released or abandoned exactly once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobs.lease import Lease
from jobs.worker.pool import JobPool

logger = logging.getLogger(__name__)

Handler = Callable[[Any, Any], Any]


@dataclass
class InFlight:
    lease: Lease
    cancel: threading.Event
    deadline: float  # time.monotonic()
    # Written by the job thread when the handler returns or raises: `error`
    # first, `finished` last, so the loop that sees `finished` sees the error.
    finished: bool = False
    error: BaseException | None = None
    # Set by whoever settles the job first (see `JobRunner.claim`); the
    # handler's eventual result is then ignored.
    settled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class JobRunner:
    def __init__(self, pool: JobPool, *, wake: threading.Event, clock: Callable[[], float] = time.monotonic) -> None:
        self.pool = pool
        self.wake = wake
        self.clock = clock
        self.in_flight: dict[Any, InFlight] = {}

    def free(self) -> int:
        """How many more jobs may start now."""
        return self.pool.free()

    def start(self, lease: Lease, handler: Handler, context: Callable[[threading.Event], Any], timeout: float) -> None:
        """Run `handler(lease.payload, context(cancel))` on a pool thread; its deadline counts from now."""
        cancel = threading.Event()
        job = InFlight(lease, cancel, self.clock() + timeout)
        self.in_flight[lease.id] = job
        ctx = context(cancel)
        self.pool.submit(lambda: self._run(job, handler, ctx))

    def _run(self, job: InFlight, handler: Handler, context: Any) -> None:
        try:
            handler(job.lease.payload, context)
        except BaseException as exc:  # reported to the loop, which judges it
            job.error = exc
        finally:
            job.finished = True
            self.wake.set()

    @staticmethod
    def claim(job: InFlight) -> bool:
        """Take the job's settling for the caller; False when someone settled it already."""
        with job.lock:
            if job.settled:
                return False
            job.settled = True
            return True

    def finished(self) -> list[InFlight]:
        """Jobs whose handler returned or raised, now off the books; those nobody settled yet are claimed."""
        done = [job for job in self.in_flight.values() if job.finished]
        for job in done:
            del self.in_flight[job.lease.id]
        return [job for job in done if self.claim(job)]

    def overdue(self) -> list[InFlight]:
        """Jobs past their deadline, claimed and cancelled (their thread stays busy until the handler gives up)."""
        now = self.clock()
        late = [job for job in self.in_flight.values() if now >= job.deadline and self.claim(job)]
        for job in late:
            job.cancel.set()
        return late

    def held(self) -> list[InFlight]:
        """Jobs whose lease the worker still holds: running and not settled."""
        return [job for job in list(self.in_flight.values()) if not job.settled]

    def claim_lost(self, lease: Lease) -> InFlight | None:
        """The lease is gone (released by an operator, reclaimed): its job, claimed, if it was still ours.

        The caller cancels it; nobody acks it.
        """
        job = self.in_flight.get(lease.id)
        if job is None or job.lease != lease or not self.claim(job):
            return None
        return job

    def cancel_all(self) -> list[InFlight]:
        """Stopping: claim and cancel every unsettled job; the caller gives their leases back."""
        jobs = [job for job in list(self.in_flight.values()) if self.claim(job)]
        for job in jobs:
            job.cancel.set()
        return jobs

    def seconds_to_next_deadline(self) -> float | None:
        deadlines = [job.deadline for job in self.held()]
        return min(deadlines) - self.clock() if deadlines else None

    def stop(self, grace_secs: float) -> list[threading.Thread]:
        """Let the threads finish and exit; returns those still busy after `grace_secs`."""
        stragglers = self.pool.stop(timeout=grace_secs)
        self.in_flight = {key: job for key, job in self.in_flight.items() if not job.finished}
        return stragglers
