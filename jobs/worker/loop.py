"""The lease loop shared by every worker command.

A `Worker` leases jobs of its kinds in one statement: its free slots, or
while jobs are short a whole batch with the rest held for the next free
slots (`jobs.worker.ahead`); runs them on a bounded pool of long-lived
job threads (`jobs.worker.pool`: one persistent connection each; a
thread whose job succeeded starts the next held lease itself, `_follow_up`)
with a cancel event per job, heartbeats every lease it holds in one
statement (`renew_many`), and finishes each one by its lease generation:

- the handler returned -> acked done in a batch (`jobs.worker.acks`):
  with the next lease statement (`ack_done_many_and_lease`), or on its own
  with `ack_done_many` when no slot is free and the batch is full or a few
  milliseconds old, and always before shutdown releases anything;
- it raised -> `ack_failed` (backoff, or dead at `max_attempts`);
- it raised `jobs.errors.Paused` (the crawler's login wall) -> `release`
  (not the job's fault), then the role's `on_paused` hook (the crawler sets
  the sticky per-source session flag) and the controls are reread at once,
  so that source's jobs stay unleased until an operator acts; other sources
  keep going;
- it ran past `job_timeout` -> cancel event set, `ack_failed("timed out...")`;
- its heartbeat found the lease gone (released by an operator, reclaimed) ->
  cancel event set and the job is dropped without any ack: the row belongs
  to someone else now;
- the worker is stopping (SIGTERM/SIGINT) -> cancel event set and `release`,
  so shutdown never costs an attempt.

Outage-shaped failures feed a circuit breaker (`jobs.worker.circuit`) that pauses
leasing for a cool-down instead of burning every queued job's attempts.

A lost database connection in any step (lease, ack, renew, release, control
reads, LISTEN, the status row) is an outage of our own, not the job's: the
step is retried with capped backoff until the database is back
(`jobs.worker.outage`), the process stays up, acks wait in memory, and
the first step after the outage renews every held lease before leasing more.
A job whose handler lost the connection is released (no attempt burnt).

Operator controls (the role's `refresh_control` hook: pause flags, browser restarts) and periodic duties are
queries, read at most once a second or at once when marked stale
(`jobs.worker.cadence`), not on every step; the breaker is in memory.

`step()` does one unit of work and says whether it leased anything, so tests
drive the loop one step at a time; `run()` is the long-lived loop around it.
Waits are interruptible: the loop waits on one event that a job thread with
nothing left to run, a failed job, a NOTIFY (a listener thread turns
`JobListener` wake-ups into it) and stop all set, never a bare sleep.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from jobs import kinds, queue, wakeup
from jobs.errors import RetryLater
from jobs.queue import Lease
from jobs.worker import circuit
from jobs.worker.acks import AckBatch
from jobs.worker.ahead import LeaseBuffer, lease_ahead_for, leases_wanted, typical_after
from jobs.worker.cadence import Cadence, control_changed
from jobs.worker.hooks import Flags, RoleHooks
from jobs.worker.outage import FLAG as OUTAGE_FLAG
from jobs.worker.outage import DatabaseOutage, DatabaseUnavailable, is_connection_lost
from jobs.worker.outcomes import Disposition, disposition
from jobs.worker.pool import ConnectionKeeper, JobPool

logger = logging.getLogger(__name__)

Handler = Callable[[Any, Any], Any]

# How long shutdown waits for cancelled handlers to return before exiting anyway.
SHUTDOWN_GRACE_SECS = 5.0
# Done acks go out in one statement per this many jobs, or once the oldest has
# waited ACK_DELAY_SECS: short enough that no lease comes near expiry and a
# dashboard never sees a finished job as running for long.
ACK_BATCH = 10
ACK_DELAY_SECS = 0.005
# Batches claimed ahead of free slots, only while jobs typically finish within
# LEASE_AHEAD_MAX_JOB_SECS (`jobs.worker.ahead`).
LEASE_AHEAD_MAX_JOB_SECS = 0.1


@dataclass
class Periodic:
    """A duty run from the loop every `interval` (first at boot): scheduling passes, reaping."""

    name: str
    interval: timedelta
    run: Callable[[], None]
    next_at: float = 0.0


@dataclass
class WorkerConfig:
    role: str
    handlers: Mapping[str, Handler]
    concurrency: int = 1
    # What the role adds: handler context, pauses, status row, a browser (`jobs.worker.hooks`).
    hooks: RoleHooks = field(default_factory=RoleHooks)
    # Per-kind job timeouts where a kind declared its own (`jobs.kinds.Kind.timeout_secs`).
    timeouts: Mapping[str, float] = field(default_factory=dict)
    lease_secs: float = field(default_factory=lambda: float(settings.CRAWLER_LEASE_SECS))
    heartbeat_secs: float = field(default_factory=lambda: float(settings.CRAWLER_HEARTBEAT_SECS))
    job_timeout_secs: float = field(default_factory=lambda: float(settings.CRAWLER_JOB_TIMEOUT_SECS))
    poll_secs: float = field(default_factory=lambda: float(settings.CRAWLER_POLL_SECS))
    circuit_threshold: int = field(default_factory=lambda: settings.CRAWLER_CIRCUIT_BREAKER_THRESHOLD)
    circuit_cooldown_secs: float = field(default_factory=lambda: float(settings.CRAWLER_CIRCUIT_BREAKER_COOLDOWN_SECS))
    periodic: Sequence[Periodic] = ()
    conn_max_age_secs: float = field(default_factory=lambda: float(settings.CRAWLER_CONN_MAX_AGE_SECS))
    ack_batch: int = ACK_BATCH
    ack_delay_secs: float = ACK_DELAY_SECS
    lease_ahead: int = field(default_factory=lambda: settings.CRAWLER_LEASE_AHEAD)
    lease_ahead_max_job_secs: float = LEASE_AHEAD_MAX_JOB_SECS

    @classmethod
    def for_role(cls, role: str, **options: Any) -> WorkerConfig:
        """The config of a worker that runs every kind registered for `role` (`jobs.kinds`)."""
        registered = kinds.for_role(role)
        timeouts = {name: kind.timeout_secs for name, kind in registered.items() if kind.timeout_secs is not None}
        handlers = {name: kind.handler for name, kind in registered.items()}
        return cls(role=role, handlers=handlers, timeouts=timeouts, **options)

    @property
    def kinds(self) -> list[str]:
        return list(self.handlers)

    def timeout_for(self, kind: str) -> float:
        return self.timeouts.get(kind, self.job_timeout_secs)


@dataclass
class InFlight:
    lease: Lease
    cancel: threading.Event
    deadline: float  # time.monotonic()
    # Written by the job thread when the handler returns or raises: `error`
    # and `ran_secs` first, `finished` last, so the loop that sees `finished`
    # sees both (a Future's condition variable cost more than the job).
    finished: bool = False
    error: BaseException | None = None
    ran_secs: float = 0.0
    # Set once the loop has acked, released or abandoned the lease; the
    # handler's eventual result is then ignored. Guarded by `lock` so the
    # heartbeat never renews a lease the loop is finishing.
    settled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def _source_id(lease: Lease) -> str | None:
    return getattr(lease.payload, "source_id", None)


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
        self.in_flight: dict[Any, InFlight] = {}
        self.breaker = circuit.CircuitState()
        # Sources the role keeps out of leasing now (expired sessions, cooldowns), read with the controls.
        self.excluded: set[str] = set()
        self.acks = AckBatch(config.ack_batch, config.ack_delay_secs)
        self.buffered = LeaseBuffer()
        # Moving average of handler run times: lease-ahead is on only while it is short.
        self.typical_job_secs: float | None = None
        self.pool = JobPool(
            config.concurrency,
            conn_max_age_secs=config.conn_max_age_secs,
            name=f"job-{config.role}",
            outages=lambda: self.outage.outages,
        )
        self.control = Cadence()
        self._connection = ConnectionKeeper(config.conn_max_age_secs)
        # Job threads start buffered jobs themselves (`_follow_up`); shutdown's release takes this too.
        self._start_lock = threading.Lock()
        self._published_circuit: str | None = None
        self._heartbeat: threading.Thread | None = None
        self._heartbeat_stop = threading.Event()
        # Retries database steps across a lost connection; its flag says since when on the status row.
        self.outage = DatabaseOutage(self.stop_event, report=lambda since: self.status.set_flag(OUTAGE_FLAG, since))
        self._outages_renewed = 0
        self.booted = False

    # --- lifecycle ------------------------------------------------------------------------

    def boot(self) -> int:
        """Reclaim leases orphaned by crashed workers, then start heartbeating. Returns how many were reclaimed."""
        reclaimed = self.outage.call("reclaim", queue.reclaim_orphaned)
        if reclaimed:
            logger.info("worker boot: reclaimed %d orphaned job(s) role=%s", reclaimed, self.config.role)
        control_changed.connect(self._on_control_changed, dispatch_uid=f"worker-{id(self)}", weak=False)
        # What operators asked before this worker started is the baseline (a browser restart requested
        # then is not this worker's to honour); what the role keeps out applies from the first lease.
        self.outage.call("control", self.refresh_control)
        self._heartbeat_stop.clear()
        self._heartbeat = threading.Thread(target=self._heartbeat_loop, name="lease-heartbeat", daemon=True)
        self._heartbeat.start()
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

        Jobs that finished before the stop are acked first (the pending batch
        goes out before anything is released), so shutdown never re-runs them.
        During a database outage each write is tried once: what cannot be
        written is left to the lease rules (it expires and is reclaimed).
        """
        self.request_stop()
        self._given_up(self.collect_finished, "acks of finished jobs")
        with self._start_lock:  # no job thread starts another after this
            running = list(self.in_flight.values())
        for job in running:
            with job.lock:
                if job.settled:
                    continue
                job.settled = True
            job.cancel.set()
            if self._given_up(lambda job=job: self.outage.call("release", queue.release, job.lease), "a release"):
                logger.info("shutdown: released job=%s kind=%s (attempt refunded)", job.lease.id, job.lease.kind)
        self._given_up(lambda: self.give_back_buffered(lambda _lease: True, "shutdown"), "buffered leases")
        for thread in self.pool.stop(timeout=grace_secs):
            logger.warning("shutdown: %s did not stop within %.0f s; leaving it", thread.name, grace_secs)
        self.in_flight = {k: j for k, j in self.in_flight.items() if not j.finished}
        self._heartbeat_stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=grace_secs)
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

    # --- the loop -------------------------------------------------------------------------

    def step(self) -> bool:
        """Settle what is done, honour control requests when due, then lease one batch and dispatch it.

        True: at least one job was leased (call again at once, there may be more).
        False: nothing leasable, no free slot, or leasing is paused (circuit
        open, sessions expired, stopping); wait before the next step.
        Done acks go out with the lease statement when there is a slot to
        fill, else when the batch is due; `collect_finished` and shutdown
        always send them.
        """
        self._connection.tidy()
        if not self.booted:
            self.boot()
        self._collect()
        self.enforce_deadlines()
        now = time.monotonic()
        if self.outage.outages != self._outages_renewed and not self.outage.unavailable:
            # Back from an outage: keep what is held before anything new is leased.
            self._outages_renewed = self.outage.outages
            self.heartbeat()
        if self.control.due(now):
            self.control.read(now)
            self.outage.call("control", self.refresh_control)
            self.run_periodic()
            if excluded := self.lease_exclusions():
                self.give_back_buffered(lambda lease: _source_id(lease) in excluded, "source paused or cooling")
            if held := set(self.config.kinds) - set(self.leasable_kinds()):
                self.give_back_buffered(lambda lease: lease.kind in held, "its kind is held (hooks.leasable_kinds)")
        if self.stop_event.is_set() or circuit.is_open(self.breaker, self.clock()):
            if not self.stop_event.is_set():  # stopping: shutdown gives the buffer back
                self.give_back_buffered(lambda _lease: True, "circuit open")
            if self.acks.due():
                self.flush_acks()
            return False
        started = self.fill_slots()
        wanted = leases_wanted(self.pool.free(), len(self.buffered), self.lease_ahead(), self.config.concurrency)
        kinds = self.leasable_kinds()
        if wanted <= 0 or not kinds:
            if self.acks.due():
                self.flush_acks()
            return started > 0
        # The pending acks ride on the lease statement: one commit settles
        # the finished jobs and claims their successors.
        done = self.acks.take()
        try:
            _, leases = self.outage.call(
                "lease",
                queue.ack_done_many_and_lease,
                done,
                kinds,
                wanted,
                timedelta(seconds=self.config.lease_secs),
                exclude_sources=self.lease_exclusions(),
            )
        except DatabaseUnavailable:
            self._unsent(done)
            raise
        self._acked(done)
        self.buffered.extend(leases)
        started += self.fill_slots()
        return bool(leases) or started > 0

    def lease_ahead(self) -> int:
        """How many leases may wait for a slot now (`jobs.worker.ahead.lease_ahead_for`)."""
        return lease_ahead_for(
            self.config.lease_ahead, self.typical_job_secs, max_job_secs=self.config.lease_ahead_max_job_secs
        )

    def fill_slots(self) -> int:
        """Start buffered leases on the free slots, oldest first; returns how many started.

        A buffered lease whose source became paused or cooling since it was
        claimed is given back instead (attempt refunded), like any lease the
        exclusions would not have granted.
        """
        started = 0
        excluded = self.lease_exclusions()
        while self.pool.free() > 0 and (lease := self.buffered.pop()) is not None:
            if excluded and _source_id(lease) in excluded:
                self._give_back(lease, "source paused or cooling")
                continue
            self.dispatch(lease)
            started += 1
        return started

    def give_back_buffered(self, predicate: Callable[[Lease], bool], reason: str) -> int:
        """Release the buffered leases `predicate` picks without burning their attempts; returns how many."""
        leases = self.buffered.take_if(predicate)
        for lease in leases:
            self._give_back(lease, reason)
        return len(leases)

    def _give_back(self, lease: Lease, reason: str) -> None:
        self.outage.call("release", queue.release, lease)
        logger.info("buffered lease released job=%s kind=%s (%s; attempt refunded)", lease.id, lease.kind, reason)

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

    def idle_wait_secs(self) -> float:
        """How long the loop may wait for a wake-up before something needs its attention."""
        wait = self.config.poll_secs
        now = time.monotonic()
        for job in self.in_flight.values():
            if not job.settled:
                wait = min(wait, job.deadline - now)
        if self.breaker.open_until is not None:
            wait = min(wait, (self.breaker.open_until - self.clock()).total_seconds())
        ack_due = self.acks.secs_until_due()
        if ack_due is not None:
            return max(min(wait, ack_due), 0.0)
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
                        listener = wakeup.JobListener(self.config.kinds)
                        self.outage.call("listen", listener.open)
                        try:
                            with self._notify_pump(listener):
                                self._loop(once=once, drain=drain)
                        finally:
                            listener.close()
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
                self.fill_slots()  # what the one step leased ahead runs too
            else:
                found = self.step()
                stepped = True
                if found and not once:
                    continue
                if drain and not found and not self.in_flight and not len(self.buffered):
                    return
            if once and not self.in_flight and not len(self.buffered):
                return
            self.wake.wait(self.idle_wait_secs())

    @contextmanager
    def _notify_pump(self, listener: wakeup.JobListener) -> Iterator[None]:
        """A thread that turns the listener's NOTIFY wake-ups into `self.wake` while the loop runs.

        The loop itself waits on `self.wake` alone, so a finished job wakes it
        at once instead of at the end of the listener's next wait slice.
        """
        stop = listener.stop

        def pump() -> None:
            while not stop.is_set():
                try:
                    if listener.wait(self.config.poll_secs):
                        self.wake.set()
                except Exception as exc:
                    if not is_connection_lost(exc):
                        raise
                    # The LISTEN session died: reopen it (polling meanwhile covers the gap).
                    listener.close()
                    self.outage.lost("listen", exc)
                    try:
                        DatabaseOutage(stop, base_secs=self.outage.base_secs, max_secs=self.outage.max_secs).call(
                            "listen", listener.open
                        )
                    except DatabaseUnavailable:
                        return
                    self.wake.set()  # a job enqueued while deaf would otherwise wait for the poll

        thread = threading.Thread(target=pump, name="notify-pump", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)

    # --- dispatch and settlement ----------------------------------------------------------

    def dispatch(self, lease: Lease) -> None:
        handler = self.config.handlers.get(lease.kind)
        if handler is None:
            self.outage.call(
                "ack", queue.ack_failed, lease, f"no handler for kind {lease.kind!r} in the {self.config.role} worker"
            )
            return
        self.pool.submit(self._start(lease, handler))

    def _start(self, lease: Lease, handler: Handler) -> Callable[[], Any]:
        """Register `lease` as running from now (its deadline counts from here); the task that runs it."""
        cancel = threading.Event()
        job = InFlight(lease, cancel, time.monotonic() + self.config.timeout_for(lease.kind))
        self.in_flight[lease.id] = job
        context = self.hooks.context(lease, self.status, cancel)
        logger.info("job start job=%s kind=%s attempt=%d/%d", lease.id, lease.kind, lease.attempts, lease.max_attempts)
        return lambda: self._run_job(job, handler, context)

    def _follow_up(self) -> Callable[[], Any] | None:
        """On a job thread whose job just succeeded: start the next buffered lease here, or None.

        Short jobs then run back to back on their thread instead of each
        waiting for the loop to hand it over (two thread switches a job). Only
        after a success, so a failure, a timeout or a login wall is judged by
        the loop before anything else starts, and never while stopping, with
        the circuit open, or for a lease of a paused or cooling source (that
        one stays buffered for the loop to give back). Registered under
        `_start_lock`, so shutdown's release sees every job that started.
        """
        with self._start_lock:
            if self.stop_event.is_set() or self.breaker.open_until is not None:
                return None
            excluded = self.lease_exclusions()
            # A kind without a handler stays too: the loop's dispatch dead-letters it.
            lease = self.buffered.pop_if(
                lambda lease: lease.kind in self.config.handlers and _source_id(lease) not in excluded
            )
            if lease is None:
                return None
            return self._start(lease, self.config.handlers[lease.kind])

    def _run_job(self, job: InFlight, handler: Handler, context: Any) -> Callable[[], Any] | None:
        """Run one job on a pool thread (on its persistent connection); returns the next job to run there, if any."""
        started = time.monotonic()
        follow_up = None
        try:
            handler(job.lease.payload, context)
        except BaseException as exc:  # reported to the loop, which judges it
            job.error = exc
        else:
            # Before this job counts as finished: the thread stays busy, so the
            # loop never hands it a second task meanwhile.
            follow_up = self._follow_up()
        finally:
            job.ran_secs = time.monotonic() - started
            job.finished = True
            if follow_up is None:
                # The loop has something to do: judge a failure, fill this idle
                # thread, or lease. A success that runs on needs no wake-up;
                # its ack is collected at the next one.
                self.wake.set()
        return follow_up

    def collect_finished(self) -> None:
        """Settle every job whose handler has returned, acking the done ones before returning."""
        self._collect()
        self.flush_acks()

    def _collect(self) -> None:
        for job_id, job in list(self.in_flight.items()):
            if not job.finished:
                continue
            del self.in_flight[job_id]
            self.typical_job_secs = typical_after(self.typical_job_secs, job.ran_secs)
            with job.lock:
                if job.settled:
                    continue
                job.settled = True
            self._settle(job.lease, job.error)

    def flush_acks(self) -> None:
        """Ack the pending done jobs in one statement (each row still guarded by its own lease)."""
        leases = self.acks.take()
        if leases:
            try:
                self.outage.call("ack", queue.ack_done_many, leases)
            except DatabaseUnavailable:
                self._unsent(leases)
                raise
            self._acked(leases)

    def _unsent(self, leases: list[Lease]) -> None:
        """Acks a stop during an outage kept from the database: back in the batch for shutdown's last try."""
        for lease in leases:
            self.acks.add(lease)

    def _acked(self, leases: list[Lease]) -> None:
        if not leases:
            return
        for lease in leases:
            logger.info("job done job=%s kind=%s", lease.id, lease.kind)
        self._publish_circuit()

    def settle(self, lease: Lease, error: BaseException | None) -> None:
        """Settle one finished job by what its handler did, now (a done one is acked before returning)."""
        self._settle(lease, error)
        self.flush_acks()

    def _settle(self, lease: Lease, error: BaseException | None) -> None:
        """Settle by the table in `jobs.worker.outcomes`; a done job joins the ack batch."""
        outcome = disposition(error)
        if outcome is Disposition.DONE:
            self.acks.add(lease)
            self.breaker = circuit.after_success(self.breaker)
        elif outcome is Disposition.PAUSE:
            self.outage.call("release", queue.release, lease)
            assert error is not None
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
            # The disk is under its floor (or a write found it full): not the job's fault.
            self.outage.call("release", queue.release, lease)
            assert error is not None
            self.outage.call("status", self.hooks.on_held, lease, error)
            logger.warning("job released job=%s kind=%s: %s", lease.id, lease.kind, error)
        elif outcome is Disposition.RELEASE:
            # Cancelled by something other than this loop (which settles the
            # leases it cancels itself), or cut off by a database outage: give
            # it back, it is not the job's fault.
            self.outage.call("release", queue.release, lease)
            logger.info("job released job=%s kind=%s: %s", lease.id, lease.kind, error)
        elif outcome is Disposition.DEFER:
            assert isinstance(error, RetryLater)
            self.outage.call("defer", queue.defer, lease, error.until, f"{type(error).__name__}: {error}")
            self.control.mark_stale()  # a Retry-After may have cooled the source for every worker: look now
            logger.info(
                "job deferred job=%s kind=%s until=%s: %s", lease.id, lease.kind, error.until.isoformat(), error
            )
        elif outcome is Disposition.DEAD:
            assert error is not None
            message = f"{type(error).__name__}: {error}"
            self.outage.call("ack", queue.ack_dead, lease, message)
            logger.warning("job dead job=%s kind=%s (permanent, not retried) error=%s", lease.id, lease.kind, message)
        else:
            assert error is not None
            self.fail(lease, error, f"{type(error).__name__}: {error}")

    def fail(self, lease: Lease, error: BaseException, message: str) -> None:
        self.outage.call("ack", queue.ack_failed, lease, message)
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
        if circuit.counts_toward_circuit(error):
            was_open = circuit.is_open(self.breaker, self.clock())
            self.breaker = circuit.after_failure(
                self.breaker,
                threshold=self.config.circuit_threshold,
                cooldown=timedelta(seconds=self.config.circuit_cooldown_secs),
                now=self.clock(),
            )
            if circuit.is_open(self.breaker, self.clock()) and not was_open:
                logger.warning(
                    "circuit open: %d consecutive source failures; leasing paused until %s",
                    self.breaker.consecutive_failures,
                    self.breaker.open_until.isoformat() if self.breaker.open_until else "?",
                )
            self._publish_circuit()

    def enforce_deadlines(self) -> None:
        now = time.monotonic()
        for job in list(self.in_flight.values()):
            if now < job.deadline:
                continue
            with job.lock:
                if job.settled:
                    continue
                job.settled = True
            job.cancel.set()
            timeout = self.config.timeout_for(job.lease.kind)
            self.typical_job_secs = typical_after(self.typical_job_secs, timeout)  # long jobs: stop leasing ahead
            self.fail(job.lease, circuit.JobTimedOut(), f"timed out after {timeout:g} s")

    def _heartbeat_loop(self) -> None:
        keeper = ConnectionKeeper(self.config.conn_max_age_secs)
        try:
            while not self._heartbeat_stop.wait(self.config.heartbeat_secs):
                keeper.tidy()
                self.heartbeat()
        finally:
            connection.close()

    def heartbeat(self) -> None:
        """Renew every lease this worker holds in one statement; drop the jobs whose lease is gone.

        Held means running jobs not yet settled, leases buffered ahead of a
        free slot, and done jobs whose ack is still in the batch (their rows
        are running until it goes out). A lost running job gets its cancel
        event and no ack at all: the row belongs to someone else now. A lost
        buffered lease is dropped unrun (or, if the loop started it
        meanwhile, abandoned like a running job). A lost done job's ack steps
        aside by itself.
        """
        jobs = [job for job in list(self.in_flight.values()) if not job.settled]
        buffered = self.buffered.pending()
        leases = [job.lease for job in jobs] + buffered + self.acks.pending()
        if not leases:
            return
        try:
            held = queue.renew_many(leases, timedelta(seconds=self.config.lease_secs))
        except Exception as exc:  # the next beat retries; a lease outlives several missed beats
            if is_connection_lost(exc):
                self.outage.lost("renew", exc)
            else:
                logger.warning("heartbeat: renewing %d lease(s) failed", len(leases), exc_info=True)
            return
        self.outage.back()
        for job in jobs:
            if job.lease.id not in held:
                self._abandon(job)
        for lease in buffered:
            if lease.id in held:
                continue
            if self.buffered.discard(lease):
                self._lease_lost(lease)
            elif (job := self.in_flight.get(lease.id)) is not None and job.lease == lease:
                self._abandon(job)

    def _abandon(self, job: InFlight) -> None:
        with job.lock:
            if job.settled:  # the loop settled it meanwhile: its ack or release is what renew saw
                return
            job.settled = True
        self._lease_lost(job.lease)
        job.cancel.set()
        self.wake.set()

    @staticmethod
    def _lease_lost(lease: Lease) -> None:
        logger.warning(
            "lease lost job=%s kind=%s generation=%d: dropping the job without acking",
            lease.id,
            lease.kind,
            lease.lease_generation,
        )

    # --- control and periodic duties ------------------------------------------------------

    def refresh_control(self) -> None:
        """Pick up what operators changed in any process, through the role's hooks."""
        self.hooks.refresh_control()
        self.excluded = set(self.hooks.exclusions())

    def _publish_circuit(self) -> None:
        until = self.breaker.open_until
        value = until.isoformat() if until is not None and circuit.is_open(self.breaker, self.clock()) else None
        if value != self._published_circuit:  # this loop is the flag's only writer
            self._published_circuit = value
            self.status.set_flag("circuit_open_until", value)

    def run_periodic(self) -> None:
        now = time.monotonic()
        self._publish_circuit()  # clears the flag once the cool-down has passed
        for duty in self.config.periodic:
            if now < duty.next_at:
                continue
            duty.next_at = now + duty.interval.total_seconds()
            try:
                duty.run()
            except Exception:  # a failed duty is retried at its next interval, never kills the loop
                logger.exception("periodic duty %s failed", duty.name)

    # --- process plumbing -----------------------------------------------------------------

    @contextmanager
    def signals(self, install: bool = True) -> Iterator[None]:
        """SIGTERM/SIGINT set the stop flag; a second one forces exit. Previous handlers are restored."""
        if not install:
            yield
            return

        def on_signal(signum: int, _frame: object) -> None:
            if self.stop_event.is_set():
                logger.warning("second signal %s: forcing exit", signal.Signals(signum).name)
                os._exit(1)
            logger.info("signal %s: stopping (in-flight jobs are released)", signal.Signals(signum).name)
            self.request_stop()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def publisher(self) -> AbstractContextManager[Any]:
        """The role's status publisher around the worker's life; its first write rides out an outage."""
        return self.hooks.publisher(role=self.config.role, kinds=self.config.kinds, call=self.outage.call)
