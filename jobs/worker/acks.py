"""Done jobs waiting to be acked together: one `ack_done_many` statement settles a batch.

Acking every job on its own costs a round trip and a commit per job, which is
most of a short job's cost. The worker loop collects the leases of jobs whose
handler returned and sends them with its next lease statement (a freed slot
is refilled at once), or on their own when the batch is full or its oldest
lease has waited `max_delay_secs` (a few milliseconds), and always before it
releases leases on shutdown. Each row keeps its own `(id, generation,
running)` guard inside `ack_done_many`, so a lease lost meanwhile steps aside.

A batch that never reaches the database (the process is killed first) leaves
its rows running under leases that expire: they are reclaimed and run again,
never recorded done twice. Handlers are idempotent for exactly that case.
Failures, releases and deferrals are not batched: they are rarer, each has
its own statement, and the breaker and pause decisions want them at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from jobs.queue import Lease


def flush_due(pending: int, oldest_age_secs: float, *, batch_size: int, max_delay_secs: float) -> bool:
    """Whether the pending acks go out now: the batch is full, or its oldest has waited long enough."""
    return pending > 0 and (pending >= batch_size or oldest_age_secs >= max_delay_secs)


class AckBatch:
    """Leases of finished jobs not yet acked. Thread-safe: the heartbeat reads it too."""

    def __init__(self, batch_size: int, max_delay_secs: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.batch_size = batch_size
        self.max_delay_secs = max_delay_secs
        self.clock = clock
        self._leases: list[Lease] = []
        self._oldest_at = 0.0
        self._lock = threading.Lock()

    def add(self, lease: Lease) -> None:
        with self._lock:
            if not self._leases:
                self._oldest_at = self.clock()
            self._leases.append(lease)

    def due(self) -> bool:
        with self._lock:
            return flush_due(
                len(self._leases),
                self.clock() - self._oldest_at,
                batch_size=self.batch_size,
                max_delay_secs=self.max_delay_secs,
            )

    def take(self) -> list[Lease]:
        """Everything pending, leaving the batch empty (the caller acks what it took)."""
        with self._lock:
            leases, self._leases = self._leases, []
            return leases

    def pending(self) -> list[Lease]:
        """A copy of what is pending: the heartbeat keeps these leases alive until they are acked."""
        with self._lock:
            return list(self._leases)

    def secs_until_due(self) -> float | None:
        """How long the loop may wait before this batch must go out; None when it is empty."""
        with self._lock:
            if not self._leases:
                return None
            if len(self._leases) >= self.batch_size:
                return 0.0
            return max(0.0, self.max_delay_secs - (self.clock() - self._oldest_at))
