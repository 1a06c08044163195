"""Lease-ahead: a few leases held for slots that will free soon, so a lease statement carries a batch.

A worker that leases only for its free slots claims at most `concurrency`
jobs per statement, and with short jobs it is bound by those round trips and
their commits: every slot that frees waits for the next statement. Holding a
small, bounded buffer of extra leases lets a freed slot start its next job at
once while the loop claims the buffer's refill, and the refill (and the done
acks riding on it) is one statement for a batch of `concurrency + ahead`
jobs. A worker holds at most that batch plus the jobs still running when it
was claimed.

Only while jobs are short: a buffered lease waits for a slot, so with jobs of
seconds (a chapter download) it would keep rows from idle peers for that
long. `lease_ahead_for` turns it on only while the typical job (a moving
average of handler run times) is under `max_job_secs`, and off until one is
measured. A buffered lease is an ordinary held lease: heartbeated with the
others (dropped unrun if it is lost), given back without burning an attempt on
shutdown, when the circuit opens or when its source is paused or cooling, and
its job's deadline counts from when it starts running.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Collection

from jobs.queue import Lease

# Moving-average weight of the newest job's run time.
TYPICAL_WEIGHT = 0.2


def typical_after(previous: float | None, sample_secs: float, *, weight: float = TYPICAL_WEIGHT) -> float:
    """The typical job run time after one more sample (exponential moving average; the first sample is it)."""
    if previous is None:
        return sample_secs
    return previous + weight * (sample_secs - previous)


def lease_ahead_for(ahead: int, typical_secs: float | None, *, max_job_secs: float) -> int:
    """How many leases may wait in the buffer: `ahead` while jobs are typically short, else none."""
    if ahead <= 0 or typical_secs is None or typical_secs > max_job_secs:
        return 0
    return ahead


def leases_wanted(free_slots: int, buffered: int, ahead: int, concurrency: int) -> int:
    """How many jobs to claim now (0: don't lease this step), after the buffer has filled what slots it could.

    Only once the buffer is empty: then one statement claims a whole batch,
    `concurrency + ahead` jobs, whatever is still running; the free slots
    start at once and the rest wait in the buffer for the running jobs to
    finish. Claiming only the free slots plus `ahead` made the batch shrink
    with every job still running when the buffer ran dry: 7 jobs a statement
    on average instead of 10 with no-op jobs. Refilling a part-empty buffer
    would spend a statement (and a commit) per freed slot, the cost the
    buffer is there to save. Without lease-ahead this is the free slots, as
    before.
    """
    if buffered > 0:
        return 0
    if ahead <= 0:
        return max(free_slots, 0)
    return max(free_slots, concurrency + ahead)


class LeaseBuffer:
    """Leases claimed ahead of a free slot, oldest first. Thread-safe: the heartbeat drops lost ones."""

    def __init__(self) -> None:
        self._leases: deque[Lease] = deque()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._leases)

    def extend(self, leases: Collection[Lease]) -> None:
        with self._lock:
            self._leases.extend(leases)

    def pop(self) -> Lease | None:
        """The oldest buffered lease, now the caller's to run or give back; None when empty."""
        with self._lock:
            return self._leases.popleft() if self._leases else None

    def pop_if(self, accept: Callable[[Lease], bool]) -> Lease | None:
        """The oldest buffered lease if `accept` takes it; else None, and it stays for the loop to deal with."""
        with self._lock:
            if not self._leases or not accept(self._leases[0]):
                return None
            return self._leases.popleft()

    def pending(self) -> list[Lease]:
        """A copy of the buffer: the heartbeat renews these with the running leases."""
        with self._lock:
            return list(self._leases)

    def discard(self, lease: Lease) -> bool:
        """Drop `lease` if it is still buffered (its lease was lost); False if the loop took it meanwhile."""
        with self._lock:
            try:
                self._leases.remove(lease)
            except ValueError:
                return False
            return True

    def take_if(self, predicate: Callable[[Lease], bool]) -> list[Lease]:
        """Remove and return the buffered leases `predicate` picks (the caller gives them back)."""
        taken: list[Lease] = []
        kept: deque[Lease] = deque()
        with self._lock:
            for lease in self._leases:
                (taken if predicate(lease) else kept).append(lease)
            self._leases = kept
        return taken
