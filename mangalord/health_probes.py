"""Health probes over the crawler's state, handed to notify by the project (notify imports no crawler code)."""

from __future__ import annotations

from datetime import datetime

from crawler import state_store
from notify.health import probes
from notify.health.conditions import Condition


def expired_sessions(now: datetime) -> list[Condition]:
    return [
        Condition(
            f"session.expired:{source_id}",
            f"source {source_id}: its login session expired; its jobs are paused until an operator signs in again",
        )
        for source_id in state_store.expired_sessions()
    ]


def register() -> None:
    probes.register("session", expired_sessions)
