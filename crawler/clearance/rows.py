"""Challenge passes in PostgreSQL (`SourceClearance`): one per source, shared by every worker on every host.

The only reader and writer of `crawler_source_clearance`. Each decision is
one short transaction holding the source's row lock (`SELECT ... FOR
UPDATE`): read, decide (`clearance.plan_pass`, pure), claim. No session state
(no advisory lock), so it holds behind PgBouncer's transaction pooling, as the
source throttle does. Cookie values never leave this module except to the
adapters that send them; `challenge_status` shows names and times only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from crawler.models import SourceClearance
from sources.clearance.passers import pass_settings
from sources.clearance.planning import PassRecord, Planned, Step, plan_pass
from sources.clearance.records import Clearance, clearance_from_json

# A failure message is shown on the dashboard; a runaway one is cut.
MAX_FAILURE_CHARS = 2000


def _valid(row: SourceClearance, now: dt.datetime) -> Clearance | None:
    if row.expires_at is not None and row.expires_at <= now:
        return None
    return clearance_from_json(row.cookies, row.user_agent, row.via)


class DatabaseStore:
    """`sources.clearance.planning.ClearanceStore` over `SourceClearance` rows."""

    def load(self, source_id: str) -> tuple[Clearance | None, int]:
        row = SourceClearance.objects.filter(source_id=source_id).first()
        if row is None:
            return None, 0
        return _valid(row, timezone.now()), row.generation

    def plan(self, source_id: str, *, seen_generation: int, owner: str, claim: bool) -> Planned:
        SourceClearance.objects.get_or_create(source_id=source_id)
        with transaction.atomic():
            row = SourceClearance.objects.select_for_update().get(source_id=source_id)
            now = timezone.now()
            clearance = _valid(row, now)
            record = PassRecord(row.generation, clearance is not None, row.pass_started_at, row.last_attempt_at)
            step, until = plan_pass(
                record,
                seen_generation=seen_generation,
                now=now,
                interval=pass_settings().interval,
                pass_timeout=pass_settings().pass_timeout,
            )
            claimed = step is Step.CLAIM and claim
            if claimed:
                row.pass_started_at, row.pass_owner, row.last_attempt_at = now, owner, now
                row.save(update_fields=["pass_started_at", "pass_owner", "last_attempt_at", "updated_at"])
        return Planned(step, until, row.generation, clearance if step is Step.REUSE else None, claimed)

    def store_pass(self, source_id: str, *, owner: str, clearance: Clearance) -> int:
        with transaction.atomic():
            row = SourceClearance.objects.select_for_update().get(source_id=source_id)
            row.generation += 1
            row.passes += 1
            row.cookies = [c.to_json() for c in clearance.cookies]
            row.user_agent, row.via, row.expires_at = clearance.user_agent, clearance.via, clearance.expires_at
            row.passed_at = timezone.now()
            if row.pass_owner == owner:  # a pass taken over after its timeout leaves the new owner's claim alone
                row.pass_started_at, row.pass_owner = None, ""
            row.save()
        return row.generation

    def record_failure(self, source_id: str, *, owner: str | None, message: str) -> None:
        now = timezone.now()
        SourceClearance.objects.get_or_create(source_id=source_id)
        SourceClearance.objects.filter(source_id=source_id).update(
            last_failure=message[:MAX_FAILURE_CHARS], last_failure_at=now, updated_at=now
        )
        if owner is not None:
            SourceClearance.objects.filter(source_id=source_id, pass_owner=owner).update(
                pass_started_at=None, pass_owner="", updated_at=now
            )


def seed(source_id: str, clearance: Clearance) -> None:
    """Keep a pass made before the source had an id (the probe of a site being added) as the source's."""
    SourceClearance.objects.get_or_create(source_id=source_id)
    DatabaseStore().store_pass(source_id, owner="", clearance=clearance)


@dataclass(frozen=True)
class ChallengeState:
    """What the dashboard shows of a source's challenge passes: no cookie value, names only."""

    source_id: str
    passes: int
    last_pass_at: dt.datetime | None
    via: str  # "browser", "solver" or "" (never passed)
    cookie_names: tuple[str, ...]
    expires_at: dt.datetime | None  # None: session cookies (kept until the site challenges again), or none
    valid: bool  # a pass is held and has not expired
    pass_in_flight: bool
    last_failure: str
    last_failure_at: dt.datetime | None

    def to_json(self) -> dict[str, Any]:
        def iso(value: dt.datetime | None) -> str | None:
            return value.isoformat() if value else None

        return {
            "source_id": self.source_id,
            "passes": self.passes,
            "last_pass_at": iso(self.last_pass_at),
            "via": self.via or None,
            "cookies": list(self.cookie_names),
            "expires_at": iso(self.expires_at),
            "valid": self.valid,
            "pass_in_flight": self.pass_in_flight,
            "last_failure": self.last_failure or None,
            "last_failure_at": iso(self.last_failure_at),
        }


def challenge_states(now: dt.datetime | None = None) -> dict[str, ChallengeState]:
    """Per source that ever met a challenge (one query): passes, the last (when, how), expiry, last failure."""
    now = now or timezone.now()
    return {
        row.source_id: ChallengeState(
            source_id=row.source_id,
            passes=row.passes,
            last_pass_at=row.passed_at,
            via=row.via,
            cookie_names=tuple(sorted(str(c.get("name")) for c in row.cookies if isinstance(c, dict))),
            expires_at=row.expires_at,
            valid=_valid(row, now) is not None,
            pass_in_flight=row.pass_started_at is not None,
            last_failure=row.last_failure,
            last_failure_at=row.last_failure_at,
        )
        for row in SourceClearance.objects.order_by("source_id")
    }


def challenge_status(now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """`challenge_states` as the status API and the live dashboard send it."""
    return [state.to_json() for state in challenge_states(now).values()]
