"""What one worker process keeps of its sources' limits between requests: idle slots, held tokens, busy marks.

A `SourceSlot` row counts one request of a source in flight against its
`max_concurrency`. A job asks for its pages one after another, so the slot
its last request held is the one its next request needs: the process keeps
the row (still counted, still expiring on its own) in an idle list, and the
next request of any job of that source in this process takes it without a
round trip. Rows are deleted when no open adapter of the source is left in
the process to use them, so another process can take that share.

A fast source's tokens may be taken a few at a time (`politeness.batch_reserve`);
the ones left over wait here for the process's next requests, for
`politeness.HOLD_SECS` at most.

A busy mark says "a job of this source just gave its thread back because the
source's tokens or slots are spoken for by other jobs": the worker leases no
further job of that source for a moment, so its threads go to sources that
have requests to spare (`busy_sources`).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class IdleSlots(Generic[T]):
    """Idle slots by source, and how many adapters of each source are open in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[str, list[T]] = defaultdict(list)
        self._open: dict[str, int] = defaultdict(int)

    def opened(self, source_id: str) -> None:
        with self._lock:
            self._open[source_id] += 1

    def closed(self, source_id: str) -> list[T]:
        """One adapter closed: the idle rows beyond what the still-open ones can use, for the caller to delete."""
        with self._lock:
            self._open[source_id] = max(self._open[source_id] - 1, 0)
            return self._trim(source_id)

    def take(self, source_id: str) -> T | None:
        with self._lock:
            idle = self._idle.get(source_id)
            return idle.pop() if idle else None

    def give_back(self, source_id: str, slot: T) -> list[T]:
        """Keep `slot` for the next request; returns the slots nobody here can use (to delete)."""
        with self._lock:
            self._idle[source_id].append(slot)
            return self._trim(source_id)

    def open_elsewhere(self, source_id: str) -> bool:
        """Is more than one adapter of the source open here (another job of it running in this process)?"""
        with self._lock:
            return self._open.get(source_id, 0) > 1

    def idle(self, source_id: str) -> int:
        with self._lock:
            return len(self._idle.get(source_id, ()))

    def forget(self) -> None:
        """Drop everything kept (a test's database is flushed under it)."""
        with self._lock:
            self._idle.clear()
            self._open.clear()

    def _trim(self, source_id: str) -> list[T]:
        idle = self._idle[source_id]
        spare = len(idle) - self._open[source_id]
        if spare <= 0:
            return []
        dropped, idle[:] = idle[:spare], idle[spare:]
        return dropped


class BusyMarks:
    """Sources whose jobs this process should not lease for a moment: another job has their requests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}

    def mark(self, source_id: str, secs: float) -> None:
        with self._lock:
            self._until[source_id] = max(self._until.get(source_id, 0.0), self._clock() + secs)

    def clear(self, source_id: str) -> None:
        with self._lock:
            self._until.pop(source_id, None)

    def forget(self) -> None:
        with self._lock:
            self._until.clear()

    def current(self) -> set[str]:
        now = self._clock()
        with self._lock:
            for source_id in [s for s, until in self._until.items() if until <= now]:
                del self._until[source_id]
            return set(self._until)


class HeldTokens:
    """Tokens a fast source's batch take left over, usable by this process until their hold ends."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, tuple[int, float]] = {}

    def keep(self, source_id: str, count: int, until: float) -> None:
        """Hold `count` tokens until `until` (on this clock); what was held before goes (it is older)."""
        with self._lock:
            if count > 0:
                self._held[source_id] = (count, until)
            else:
                self._held.pop(source_id, None)

    def take(self, source_id: str) -> bool:
        with self._lock:
            count, until = self._held.get(source_id, (0, 0.0))
            if not count or self._clock() >= until:
                self._held.pop(source_id, None)
                return False
            self._held[source_id] = (count - 1, until)
            return True

    def drop(self, source_id: str) -> None:
        with self._lock:
            self._held.pop(source_id, None)

    def forget(self) -> None:
        with self._lock:
            self._held.clear()


BUSY = BusyMarks()
HELD_TOKENS = HeldTokens()


def busy_sources() -> set[str]:
    """Sources whose jobs this process gave back for being busy, while the mark lasts: leave them out of leases."""
    return BUSY.current()
