"""What a worker is told: its role, the handlers of its kinds, concurrency, timings, hooks and periodic duties."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings

from jobs import kinds
from jobs.worker.hooks import RoleHooks

Handler = Callable[[Any, Any], Any]


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
    lease_secs: float = field(default_factory=lambda: float(settings.JOBS_LEASE_SECS))
    heartbeat_secs: float = field(default_factory=lambda: float(settings.JOBS_HEARTBEAT_SECS))
    job_timeout_secs: float = field(default_factory=lambda: float(settings.JOBS_JOB_TIMEOUT_SECS))
    poll_secs: float = field(default_factory=lambda: float(settings.JOBS_POLL_SECS))
    circuit_threshold: int = field(default_factory=lambda: settings.JOBS_CIRCUIT_BREAKER_THRESHOLD)
    circuit_cooldown_secs: float = field(default_factory=lambda: float(settings.JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS))
    periodic: Sequence[Periodic] = ()
    conn_max_age_secs: float = field(default_factory=lambda: float(settings.JOBS_CONN_MAX_AGE_SECS))

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
