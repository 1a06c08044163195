"""What a worker role adds to the generic loop: its handlers' context, its pauses, its status row.

The loop leases, runs and settles jobs of any kind; what only one role needs
(the crawler's shared browser, its per-source session pauses and cooldowns,
the dashboard's status row) comes in through a `RoleHooks` object the app
builds (`crawler.workers.roles`). The defaults here fit a role that needs none
of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from jobs.lease import Lease


class Flags:
    """The loop's own status flags (circuit open, database unavailable) when the role keeps no richer status."""

    def __init__(self) -> None:
        self._flags: dict[str, Any] = {}
        self._lock = threading.Lock()

    def set_flag(self, name: str, value: Any) -> None:
        with self._lock:
            self._flags[name] = value

    def flags(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._flags)


@dataclass
class JobContext:
    """What a handler gets besides its payload; `cancel` is set on shutdown, timeout or a lost lease."""

    lease: Lease
    status: Any
    cancel: threading.Event


class RoleHooks:
    """The role-specific parts of a worker; every method has a do-nothing default.

    The loop calls `refresh_control` and `on_paused` through its outage
    retry, so a hook may query the database.
    """

    def context(self, lease: Lease, status: Any, cancel: threading.Event) -> Any:
        """The second argument of the handler."""
        return JobContext(lease=lease, status=status, cancel=cancel)

    def refresh_control(self) -> None:
        """Reread what operators changed in any process (read at most once a second, or when marked stale)."""

    def exclusions(self) -> set[str]:
        """`source_id`s whose jobs must not be leased now (as of the last `refresh_control`)."""
        return set()

    def momentary_exclusions(self) -> set[str]:
        """`source_id`s to leave out of this very lease (asked at every lease: keep it cheap, no query)."""
        return set()

    def leasable_kinds(self, kinds: list[str]) -> list[str]:
        """Which of the worker's `kinds` to lease now (as of the last `refresh_control` or `on_held`)."""
        return kinds

    def on_paused(self, lease: Lease, error: BaseException) -> None:
        """A handler raised `jobs.errors.Paused`; its lease is already released."""

    def on_held(self, lease: Lease, error: BaseException) -> None:
        """A handler raised `jobs.errors.Held` or hit a full disk; its lease is already released."""

    def publisher(self, *, role: str, kinds: list[str], call: Callable[..., Any]) -> AbstractContextManager[Any]:
        """A context manager around the worker's life that publishes its status (`call` rides out outages)."""
        return nullcontext()

    def close(self) -> None:
        """Shutdown: free what the role holds (a browser)."""
