"""The settler alone, with no loop and no threads: each outcome's queue write, and the breaker it feeds."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from analysis.payloads import AnalyzePage
from jobs import queue
from jobs.errors import Paused, RetryLater, Unavailable
from jobs.lease import Lease
from jobs.models import Job, JobState
from jobs.worker.config import WorkerConfig
from jobs.worker.hooks import Flags, RoleHooks
from jobs.worker.outage import DatabaseOutage
from jobs.worker.settle import Settler

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


class PausingHooks(RoleHooks):
    def __init__(self) -> None:
        self.paused: list[uuid.UUID] = []

    def on_paused(self, lease: Lease, error: BaseException) -> None:
        self.paused.append(lease.id)


class Calls:
    def __init__(self) -> None:
        self.refreshed = 0
        self.stale = 0

    def refresh(self) -> None:
        self.refreshed += 1

    def mark_stale(self) -> None:
        self.stale += 1


def settler(calls: Calls, *, hooks: RoleHooks | None = None, now: list[datetime] | None = None) -> Settler:
    clock = (lambda: now[0]) if now is not None else timezone.now
    config = WorkerConfig(
        role="test",
        handlers={},
        hooks=hooks or RoleHooks(),
        circuit_threshold=2,
        circuit_cooldown_secs=60,
    )
    return Settler(
        config,
        status=Flags(),
        outage=DatabaseOutage(threading.Event()),
        clock=clock,
        refresh_control=calls.refresh,
        control_stale=calls.mark_stale,
    )


def leased() -> Lease:
    queue.enqueue(AnalyzePage(page_id=uuid.uuid4()))
    (lease,) = queue.lease(["analyze_page"], 1, timedelta(minutes=5))
    return lease


def test_a_retry_later_defers_the_job_and_asks_for_the_controls_to_be_reread():
    calls = Calls()
    lease = leased()
    until = timezone.now() + timedelta(minutes=10)
    settler(calls).settle(lease, RetryLater("answered 429", until=until))
    row = Job.objects.get(id=lease.id)
    assert (row.state, row.attempts, row.deferrals, row.scheduled_at) == (JobState.PENDING, 0, 1, until)
    assert calls.stale == 1


def test_a_login_wall_releases_the_job_tells_the_role_and_rereads_the_controls_at_once():
    calls, hooks = Calls(), PausingHooks()
    lease = leased()
    settler(calls, hooks=hooks).settle(lease, Paused("login wall"))
    assert (Job.objects.get(id=lease.id).state, Job.objects.get(id=lease.id).attempts) == (JobState.PENDING, 0)
    assert hooks.paused == [lease.id]
    assert calls.refreshed == 1


def test_outage_failures_open_the_breaker_at_the_threshold_and_a_success_closes_it():
    now = [timezone.now()]
    calls = Calls()
    settle = settler(calls, now=now)
    settle.settle(leased(), Unavailable("refused"))
    assert not settle.circuit_open()
    settle.settle(leased(), Unavailable("refused"))
    assert settle.circuit_open()
    assert settle.status.flags()["circuit_open_until"] == (now[0] + timedelta(seconds=60)).isoformat()

    now[0] += timedelta(seconds=61)
    settle.ack_done([leased()])  # the probe job succeeded
    assert not settle.circuit_open()
    assert settle.status.flags()["circuit_open_until"] is None
