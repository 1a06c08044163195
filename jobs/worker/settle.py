"""Settling finished jobs: one queue write per outcome, and the circuit breaker those outcomes feed.

The `Settler` owns what happens after a handler has returned or raised: it
acks or releases by the table in `jobs.worker.outcomes`, fails timed-out
jobs, and keeps the circuit breaker (`jobs.worker.circuit`) whose open
window the loop reads before leasing. Every write goes through the worker's
`DatabaseOutage`, so a lost connection is ridden out, not blamed on the job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from jobs import queue, retry
from jobs.errors import RetryLater
from jobs.lease import Lease
from jobs.worker import circuit
from jobs.worker.config import WorkerConfig
from jobs.worker.outage import DatabaseOutage
from jobs.worker.outcomes import Disposition, disposition

logger = logging.getLogger(__name__)


def _source_id(lease: Lease) -> str | None:
    return getattr(lease.payload, "source_id", None)


class Settler:
    """Writes each finished job's outcome and keeps the worker's circuit breaker.

    `refresh_control` rereads what the role keeps out of leasing (after a
    login wall paused a source); `control_stale` asks the loop to reread the
    controls at its next step (after a Retry-After may have cooled a source).
    """

    def __init__(
        self,
        config: WorkerConfig,
        *,
        status: Any,
        outage: DatabaseOutage,
        clock: Callable[[], datetime],
        refresh_control: Callable[[], None],
        control_stale: Callable[[], None],
    ) -> None:
        self.config = config
        self.hooks = config.hooks
        self.status = status
        self.outage = outage
        self.clock = clock
        self.refresh_control = refresh_control
        self.control_stale = control_stale
        self.breaker = circuit.CircuitState()
        self._published_circuit: str | None = None

    def circuit_open(self) -> bool:
        return circuit.is_open(self.breaker, self.clock())

    def ack_done(self, done: list[Lease]) -> None:
        """Ack the jobs whose handlers returned, in one statement."""
        if done:
            self.outage.call("ack", queue.ack_done_many, done)
            self.acked(done)

    def acked(self, done: list[Lease]) -> None:
        """What follows the acks of returned jobs (written by the caller): the log lines and a closing breaker."""
        if not done:
            return
        for lease in done:
            logger.info("job done job=%s kind=%s", lease.id, lease.kind)
        self.breaker = circuit.after_success(self.breaker)
        self.publish_circuit()

    def settle(self, lease: Lease, error: BaseException | None) -> None:
        """Settle one finished job by what its handler did (`jobs.worker.outcomes`)."""
        outcome = disposition(error)
        if outcome is Disposition.DONE:
            self.outage.call("ack", queue.ack_done, lease)
            self.breaker = circuit.after_success(self.breaker)
            return
        assert error is not None
        message = f"{type(error).__name__}: {error}"
        if outcome is Disposition.PAUSE:
            self.outage.call("release", retry.release, lease)
            self.outage.call("status", self.hooks.on_paused, lease, error)
            # Reread at once what the role now keeps out, so no other job of that source starts meanwhile.
            self.outage.call("control", self.refresh_control)
            logger.warning(
                "job released job=%s kind=%s source=%s: %s; its source is paused until an operator acts",
                lease.id,
                lease.kind,
                _source_id(lease),
                error,
            )
        elif outcome is Disposition.HOLD:
            # Something the job needs has run out (the disk under its floor): not the job's fault.
            self.outage.call("release", retry.release, lease)
            self.outage.call("status", self.hooks.on_held, lease, error)
            logger.warning("job released job=%s kind=%s: %s", lease.id, lease.kind, error)
        elif outcome is Disposition.RELEASE:
            # Cancelled by something other than this loop (which settles the
            # leases it cancels itself), or cut off by a database outage: give
            # it back, it is not the job's fault.
            self.outage.call("release", retry.release, lease)
            logger.info("job released job=%s kind=%s: %s", lease.id, lease.kind, error)
        elif outcome is Disposition.DEFER:
            assert isinstance(error, RetryLater)
            self.outage.call("defer", retry.defer, lease, error.until, message)
            self.control_stale()  # a Retry-After may have cooled the source for every worker: look now
            logger.info(
                "job deferred job=%s kind=%s until=%s: %s", lease.id, lease.kind, error.until.isoformat(), error
            )
        elif outcome is Disposition.DEAD:
            self.outage.call("ack", retry.ack_dead, lease, message)
            logger.warning("job dead job=%s kind=%s (permanent, not retried) error=%s", lease.id, lease.kind, message)
        else:
            self.fail(lease, error, message)

    def fail(self, lease: Lease, error: BaseException, message: str) -> None:
        """Ack a failed attempt (backoff, or dead at `max_attempts`); an outage-shaped failure feeds the breaker."""
        self.outage.call("ack", retry.ack_failed, lease, message)
        terminal = lease.attempts >= lease.max_attempts
        logger.warning(
            "job failed job=%s kind=%s attempt=%d/%d %s error=%s",
            lease.id,
            lease.kind,
            lease.attempts,
            lease.max_attempts,
            "dead" if terminal else "retry-scheduled",
            message,
        )
        if not circuit.counts_toward_circuit(error):
            return
        was_open = self.circuit_open()
        self.breaker = circuit.after_failure(
            self.breaker,
            threshold=self.config.circuit_threshold,
            cooldown=timedelta(seconds=self.config.circuit_cooldown_secs),
            now=self.clock(),
        )
        if self.circuit_open() and not was_open:
            logger.warning(
                "circuit open: %d consecutive failures; leasing paused until %s",
                self.breaker.consecutive_failures,
                self.breaker.open_until.isoformat() if self.breaker.open_until else "?",
            )
        self.publish_circuit()

    def publish_circuit(self) -> None:
        """Write the breaker's open window to the status row when it changed; cleared once it has passed."""
        until = self.breaker.open_until
        value = until.isoformat() if until is not None and self.circuit_open() else None
        if value != self._published_circuit:  # this settler is the flag's only writer
            self._published_circuit = value
            self.status.set_flag("circuit_open_until", value)
