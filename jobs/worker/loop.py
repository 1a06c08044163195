"""The lease loop shared by every worker role: lease, dispatch, settle.

A `Worker` leases jobs of its kinds for its free slots in one statement, runs
them on the job runner (`jobs.worker.runner`: long-lived threads, a cancel
event and a deadline per job), and settles each finished job by its lease
generation through the settler (`jobs.worker.settle`), by the table in
`jobs.worker.outcomes`:

- the handler returned -> acked done (the jobs found finished in one step go
  out in one statement, each row keeping its own guard);
- it raised -> `ack_failed` (backoff, or dead at `max_attempts`);
- it raised `jobs.errors.Paused` (the crawler's login wall) -> `release`
  (not the job's fault), then the role's `on_paused` hook (the crawler sets
  the sticky per-source session flag) and the controls are reread at once,
  so that source's jobs stay unleased until an operator acts;
- it ran past its timeout -> cancel event set, `ack_failed("timed out...")`;
- the heartbeat (`jobs.worker.heartbeat`) found its lease gone -> cancel
  event set and no ack at all: the row belongs to someone else now;
- the worker is stopping (SIGTERM/SIGINT) -> cancel event set and `release`,
  so shutdown never costs an attempt.

Outage-shaped failures feed a circuit breaker (`jobs.worker.circuit`) that
pauses leasing for a cool-down instead of burning every queued job's attempts.
A lost database connection in any step is an outage of our own, not the
job's: the step is retried with capped backoff (`jobs.worker.outage`), and
the first step after an outage renews every held lease before leasing more.

Operator controls (the role's `refresh_control` hook) and periodic duties are
read at most once a second or at once when marked stale (`jobs.worker.cadence`).

`step()` does one unit of work and says whether it leased anything;
`run()` is the long-lived loop around it. Waits are interruptible: the loop
waits on one event that finished jobs, NOTIFY wake-ups
(`jobs.worker.listener`) and stop all set, never a bare sleep.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.utils import timezone

from jobs import housekeeping, queue, retry
from jobs.lease import Lease
from jobs.worker import circuit
from jobs.worker.cadence import Cadence, control_changed
from jobs.worker.config import Periodic, WorkerConfig
from jobs.worker.heartbeat import Heartbeat
from jobs.worker.hooks import Flags
from jobs.worker.listener import WakeUpListener
from jobs.worker.outage import FLAG as OUTAGE_FLAG
from jobs.worker.outage import DatabaseOutage, DatabaseUnavailable
from jobs.worker.pool import ConnectionKeeper, JobPool
from jobs.worker.runner import JobRunner
from jobs.worker.settle import Settler
from jobs.worker.signals import stop_on_signals

__all__ = ["Periodic", "Worker", "WorkerConfig"]

logger = logging.getLogger(__name__)

# How long shutdown waits for cancelled handlers to return before exiting anyway.
SHUTDOWN_GRACE_SECS = 5.0


class Worker:
    def __init__(
        self, config: WorkerConfig, *, status: Any = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.config = config
        self.hooks = config.hooks
        # Anything with `set_flag(name, value)`: the role's status handle, or the loop's own flags.
        self.status = status if status is not None else Flags()
        self.clock = clock or timezone.now
        self.stop_event = threading.Event()
        # Set by finished jobs, NOTIFY and stop: cuts the idle wait short.
        self.wake = threading.Event()
        # Sources the role keeps out of leasing now (expired sessions, cooldowns), read with the controls.
        self.excluded: set[str] = set()
        self.control = Cadence()
        # Retries database steps across a lost connection; its flag says since when on the status row.
        self.outage = DatabaseOutage(self.stop_event, report=lambda since: self.status.set_flag(OUTAGE_FLAG, since))
        pool = JobPool(
            config.concurrency,
            conn_max_age_secs=config.conn_max_age_secs,
            name=f"job-{config.role}",
            outages=lambda: self.outage.outages,
        )
        self.runner = JobRunner(pool, wake=self.wake)
        self.heartbeat = Heartbeat(
            held=lambda: [job.lease for job in self.runner.held()],
            on_lost=self._lease_lost,
            lease_secs=config.lease_secs,
            interval_secs=config.heartbeat_secs,
            conn_max_age_secs=config.conn_max_age_secs,
            outage=self.outage,
        )
        self.settler = Settler(
            config,
            status=self.status,
            outage=self.outage,
            clock=self.clock,
            refresh_control=self.refresh_control,
            control_stale=self.control.mark_stale,
        )
        self._connection = ConnectionKeeper(config.conn_max_age_secs)
        self._outages_renewed = 0
        self.booted = False

    def running_jobs(self) -> list[Lease]:
        """The leases of the jobs this worker holds now, finished or not yet settled: a snapshot."""
        return [job.lease for job in list(self.runner.in_flight.values())]

    # --- lifecycle ------------------------------------------------------------------------

    def boot(self) -> int:
        """Reclaim leases orphaned by crashed workers, read the controls, start heartbeating; how many reclaimed."""
        reclaimed = self.outage.call("reclaim", housekeeping.reclaim_orphaned)
        if reclaimed:
            logger.info("worker boot: reclaimed %d orphaned job(s) role=%s", reclaimed, self.config.role)
        control_changed.connect(self._on_control_changed, dispatch_uid=f"worker-{id(self)}", weak=False)
        # What operators asked before this worker started is the baseline (a browser restart requested
        # then is not this worker's to honour); what the role keeps out applies from the first lease.
        self.outage.call("control", self.refresh_control)
        self.heartbeat.start()
        self.booted = True
        logger.info("worker ready role=%s kinds=%s pid=%d", self.config.role, ",".join(self.config.kinds), os.getpid())
        return reclaimed

    def _on_control_changed(self, **_kwargs: Any) -> None:
        self.control.mark_stale()

    def request_stop(self) -> None:
        self.stop_event.set()
        self.wake.set()

    def shutdown(self, grace_secs: float = SHUTDOWN_GRACE_SECS) -> None:
        """Cancel in-flight work and give every held lease back without burning an attempt.

        Jobs that finished before the stop are settled first, so shutdown
        never re-runs them. During a database outage each write is tried
        once: what cannot be written is left to the lease rules (it expires
        and is reclaimed).
        """
        self.request_stop()
        self._given_up(self.collect_finished, "settling finished jobs")
        for job in self.runner.cancel_all():
            if self._given_up(partial(self.outage.call, "release", retry.release, job.lease), "a release"):
                logger.info("shutdown: released job=%s kind=%s (attempt refunded)", job.lease.id, job.lease.kind)
        for thread in self.runner.stop(grace_secs):
            logger.warning("shutdown: %s did not stop within %.0f s; leaving it", thread.name, grace_secs)
        self.heartbeat.stop(timeout=grace_secs)
        control_changed.disconnect(dispatch_uid=f"worker-{id(self)}")
        try:
            self.hooks.close()
        except Exception:
            logger.warning("shutdown: the %s role's close failed", self.config.role, exc_info=True)

    def _given_up(self, write: Callable[[], Any], what: str) -> bool:
        """Run a shutdown write once; during an outage log what is left to the lease rules. True if written."""
        try:
            write()
        except DatabaseUnavailable:
            logger.warning("shutdown: database unavailable; %s left to the lease rules (reclaimed on expiry)", what)
            return False
        return True

    # --- one step -------------------------------------------------------------------------

    def step(self) -> bool:
        """Settle what is done, honour control requests when due, then lease for the free slots and dispatch.

        True: at least one job was leased (call again at once, there may be more).
        False: nothing leasable, no free slot, or leasing is paused (circuit
        open, sources paused, stopping); wait before the next step.
        """
        self._connection.tidy()
        if not self.booted:
            self.boot()
        done = self._settle_finished()
        self.enforce_deadlines()
        now = time.monotonic()
        if self.outage.outages != self._outages_renewed and not self.outage.unavailable:
            # Back from an outage: keep what is held before anything new is leased.
            self._outages_renewed = self.outage.outages
            self.heartbeat.beat()
        if self.control.due(now):
            self.control.read(now)
            self.outage.call("control", self.refresh_control)
            self.run_periodic()
        free = self.runner.free()
        if free <= 0 or self.stop_event.is_set() or self.settler.circuit_open():
            self.settler.ack_done(done)
            return False
        kinds = self.leasable_kinds()
        if not kinds:
            self.settler.ack_done(done)
            return False
        # The finished jobs' acks and their successors' claim: one statement, one commit.
        _, leases = self.outage.call(
            "lease",
            queue.ack_done_many_and_lease,
            done,
            kinds,
            free,
            timedelta(seconds=self.config.lease_secs),
            exclude_sources=self.lease_exclusions(),
        )
        self.settler.acked(done)
        for lease in leases:
            self.dispatch(lease)
        return bool(leases)

    def leasable_kinds(self) -> list[str]:
        """The kinds to lease now: this worker's, less those its role holds back (e.g. downloads on a full disk)."""
        return self.hooks.leasable_kinds(self.config.kinds)

    def lease_exclusions(self) -> set[str]:
        """Source ids whose jobs this worker must not lease now: the one place leasing leaves sources out.

        What the role's hooks said at the last control read (`refresh_control`):
        for the crawler, sources whose session expired or that are cooling
        down after a 429/503, so other sources keep going; and what they say
        now about sources spoken for a moment (the crawler: sources one of its
        jobs gave back as busy, so the threads go to others).
        """
        return self.excluded | self.hooks.momentary_exclusions()

    def dispatch(self, lease: Lease) -> None:
        handler = self.config.handlers.get(lease.kind)
        if handler is None:
            message = f"no handler for kind {lease.kind!r} in the {self.config.role} worker"
            self.outage.call("ack", retry.ack_failed, lease, message)
            return
        logger.info("job start job=%s kind=%s attempt=%d/%d", lease.id, lease.kind, lease.attempts, lease.max_attempts)
        self.runner.start(
            lease,
            handler,
            lambda cancel: self.hooks.context(lease, self.status, cancel),
            self.config.timeout_for(lease.kind),
        )

    def wait_until_settled(self, timeout: float) -> bool:
        """Let the jobs in flight finish and settle them, leasing nothing new; False if some still run at `timeout`."""
        deadline = time.monotonic() + timeout
        while self.runner.in_flight:
            if time.monotonic() >= deadline:
                return False
            self.wake.wait(0.05)
            self.wake.clear()
            self.collect_finished()
            self.enforce_deadlines()
        return True

    # --- settling -------------------------------------------------------------------------

    def collect_finished(self) -> None:
        """Settle every job whose handler has returned or raised; the done ones in one statement."""
        self.settler.ack_done(self._settle_finished())

    def _settle_finished(self) -> list[Lease]:
        """Settle the finished jobs that failed; the leases of those that returned, for the caller to ack."""
        done: list[Lease] = []
        for job in self.runner.finished():
            if job.error is None:
                done.append(job.lease)
            else:
                self.settle(job.lease, job.error)
        return done

    def settle(self, lease: Lease, error: BaseException | None) -> None:
        """Settle one finished job by what its handler did (`jobs.worker.settle`)."""
        self.settler.settle(lease, error)

    def enforce_deadlines(self) -> None:
        for job in self.runner.overdue():
            timeout = self.config.timeout_for(job.lease.kind)
            self.settler.fail(job.lease, circuit.JobTimedOut(), f"timed out after {timeout:g} s")

    def _lease_lost(self, lease: Lease) -> None:
        job = self.runner.claim_lost(lease)
        if job is None:  # settled meanwhile: its ack or release is what the heartbeat saw
            return
        logger.warning(
            "lease lost job=%s kind=%s generation=%d: dropping the job without acking",
            lease.id,
            lease.kind,
            lease.lease_generation,
        )
        job.cancel.set()
        self.wake.set()

    # --- control and periodic duties ------------------------------------------------------

    def refresh_control(self) -> None:
        """Pick up what operators changed in any process, through the role's hooks."""
        self.hooks.refresh_control()
        self.excluded = set(self.hooks.exclusions())

    def run_periodic(self) -> None:
        now = time.monotonic()
        self.settler.publish_circuit()  # clears the flag once the cool-down has passed
        for duty in self.config.periodic:
            if now < duty.next_at:
                continue
            duty.next_at = now + duty.interval.total_seconds()
            try:
                duty.run()
            except Exception:  # a failed duty is retried at its next interval, never kills the loop
                logger.exception("periodic duty %s failed", duty.name)

    # --- the long-lived loop --------------------------------------------------------------

    def idle_wait_secs(self) -> float:
        """How long the loop may wait for a wake-up before something needs its attention."""
        wait = self.config.poll_secs
        next_deadline = self.runner.seconds_to_next_deadline()
        if next_deadline is not None:
            wait = min(wait, next_deadline)
        open_until = self.settler.breaker.open_until
        if open_until is not None:
            wait = min(wait, (open_until - self.clock()).total_seconds())
        return max(wait, 0.05)

    def run(self, *, once: bool = False, drain: bool = False, install_signals: bool = True) -> int:
        """Run until stopped (or, with `once`/`drain`, until the work runs out); returns the exit code.

        `once`: one step, then wait for what it leased to finish. `drain`:
        keep stepping until nothing is leasable and nothing is in flight.
        """
        with self.signals(install_signals):
            try:
                with self.publisher():
                    try:
                        self.boot()
                        with WakeUpListener(
                            self.config.kinds, wake=self.wake, outage=self.outage, poll_secs=self.config.poll_secs
                        ):
                            self._loop(once=once, drain=drain)
                    finally:
                        self.shutdown()
            except DatabaseUnavailable:
                if not self.stop_event.is_set():
                    raise
                logger.warning("stopped during a database outage; unwritten leases are left to the lease rules")
        return 0

    def _loop(self, *, once: bool, drain: bool) -> None:
        stepped = False
        while not self.stop_event.is_set():
            self.wake.clear()
            if once and stepped:
                self.collect_finished()
                self.enforce_deadlines()
            else:
                found = self.step()
                stepped = True
                if found and not once:
                    continue
                if drain and not found and not self.runner.in_flight:
                    return
            if once and not self.runner.in_flight:
                return
            self.wake.wait(self.idle_wait_secs())

    def signals(self, install: bool = True) -> AbstractContextManager[None]:
        """SIGTERM/SIGINT set the stop flag; a second one forces exit (`jobs.worker.signals`)."""
        return stop_on_signals(self.stop_event, self.request_stop) if install else nullcontext()

    def publisher(self) -> AbstractContextManager[Any]:
        """The role's status publisher around the worker's life; its first write rides out an outage."""
        return self.hooks.publisher(role=self.config.role, kinds=self.config.kinds, call=self.outage.call)
