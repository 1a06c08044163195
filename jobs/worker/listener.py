"""The wake-up listener: a thread that turns NOTIFY wake-ups for the worker's kinds into its wake event.

The loop waits on one event (a finished job, a NOTIFY, stop), never on the
LISTEN connection itself, so a finished job wakes it at once. A LISTEN
session that dies is reopened through the outage retry; polling covers the
gap, and the loop is woken once it is back in case a job came meanwhile.
"""

from __future__ import annotations

import threading

from jobs.wakeup import JobListener
from jobs.worker.outage import DatabaseOutage, DatabaseUnavailable, is_connection_lost


class WakeUpListener:
    def __init__(
        self, kinds: list[str] | None, *, wake: threading.Event, outage: DatabaseOutage, poll_secs: float
    ) -> None:
        self.listener = JobListener(kinds)
        self.wake = wake
        self.outage = outage
        self.poll_secs = poll_secs
        self._thread: threading.Thread | None = None

    def __enter__(self) -> WakeUpListener:
        # Open before the first lease, so a job enqueued between an empty lease and the wait is not missed.
        self.outage.call("listen", self.listener.open)
        self._thread = threading.Thread(target=self._pump, name="notify-pump", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.listener.close()

    def _pump(self) -> None:
        stop = self.listener.stop
        while not stop.is_set():
            try:
                if self.listener.wait(self.poll_secs):
                    self.wake.set()
            except Exception as exc:
                if not is_connection_lost(exc):
                    raise
                self.listener.close()
                self.outage.lost("listen", exc)
                retry = DatabaseOutage(stop, base_secs=self.outage.base_secs, max_secs=self.outage.max_secs)
                try:
                    retry.call("listen", self.listener.open)
                except DatabaseUnavailable:
                    return
                self.wake.set()  # a job enqueued while deaf would otherwise wait for the poll
