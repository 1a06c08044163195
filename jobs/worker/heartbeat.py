"""The heartbeat: every `interval`, renew every lease the worker holds in one statement.

It runs on its own thread with its own connection, so a long job or a busy
loop never lets a lease lapse. A lease the renewal no longer finds (released
by an operator, reclaimed, re-leased) is reported to `on_lost`, which cancels
that job without acking it: the row belongs to someone else now. A failed
renewal is retried at the next beat; a lease outlives several missed beats.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from django.db import connection

from jobs import ownership
from jobs.lease import Lease
from jobs.worker.outage import DatabaseOutage, is_connection_lost
from jobs.worker.pool import ConnectionKeeper

logger = logging.getLogger(__name__)


class Heartbeat:
    def __init__(
        self,
        *,
        held: Callable[[], list[Lease]],
        on_lost: Callable[[Lease], None],
        lease_secs: float,
        interval_secs: float,
        conn_max_age_secs: float,
        outage: DatabaseOutage,
    ) -> None:
        self.held = held
        self.on_lost = on_lost
        self.lease_secs = lease_secs
        self.interval_secs = interval_secs
        self.conn_max_age_secs = conn_max_age_secs
        self.outage = outage
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> None:
        """Renew what is held now; report each lease that is gone."""
        leases = self.held()
        if not leases:
            return
        try:
            kept = ownership.renew_many(leases, timedelta(seconds=self.lease_secs))
        except Exception as exc:  # the next beat retries
            if is_connection_lost(exc):
                self.outage.lost("renew", exc)
            else:
                logger.warning("heartbeat: renewing %d lease(s) failed", len(leases), exc_info=True)
            return
        self.outage.back()
        for lease in leases:
            if lease.id not in kept:
                self.on_lost(lease)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout)

    def _run(self) -> None:
        keeper = ConnectionKeeper(self.conn_max_age_secs)
        try:
            while not self._stop.wait(self.interval_secs):
                keeper.tidy()
                self.beat()
        finally:
            connection.close()
