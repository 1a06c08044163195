"""How often the loop rereads operator controls and runs its periodic duties: at most once a second.

Pause flags (expired sessions), browser-restart requests and periodic duties
are queries; checking them on every step made each job pay for them. They are
read when `every_secs` has passed since the last read, or at once when someone
marked them stale: a control write in this process (`control_changed`, sent by
the app that wrote it, e.g. `crawler.state_store`), or the loop's own pause decision.
"""

from __future__ import annotations

import threading

from django.dispatch import Signal

CONTROL_EVERY_SECS = 1.0

# Sent in-process after a write that workers act on (a session flag, a
# browser-restart request), so a worker in the same process rereads its
# controls at once; workers in other processes reread them within a second.
control_changed = Signal()


def control_due(last_read_at: float | None, now: float, *, every_secs: float, stale: bool) -> bool:
    """Reread controls when never read, marked stale, or `every_secs` old."""
    return stale or last_read_at is None or now - last_read_at >= every_secs


class Cadence:
    def __init__(self, every_secs: float = CONTROL_EVERY_SECS) -> None:
        self.every_secs = every_secs
        self.last_read_at: float | None = None
        self._stale = threading.Event()  # set from any thread (a signal receiver, the heartbeat)

    def mark_stale(self) -> None:
        self._stale.set()

    def due(self, now: float) -> bool:
        return control_due(self.last_read_at, now, every_secs=self.every_secs, stale=self._stale.is_set())

    def read(self, now: float) -> None:
        """Record a read at `now` (clears the stale mark first, so a write during the read is not lost)."""
        self._stale.clear()
        self.last_read_at = now
