"""What a challenged adapter does next, decided from what the store holds (a pure function), and the stores.

Several workers on several hosts meet the same challenge: `plan_pass` lets
one of them pass it while the others wait for that pass or reuse it, and
spaces attempts (CRAWLER_CHALLENGE_PASS_INTERVAL_SECS) so a site that
challenges every request is not passed in a loop. The database store is
`crawler.clearance.rows`; `MemoryStore` serves a probe of a site not added yet.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import Protocol

from sources.clearance.records import Clearance

# --- what to do about a challenge: a pure decision ------------------------------------------------


class Step(enum.Enum):
    REUSE = "reuse"  # a newer pass than the adapter's is stored: retry with it
    WAIT = "wait"  # another worker's pass is in flight: wait for it
    COOL = "cool"  # a pass was tried too recently: the source waits for the next one
    CLAIM = "claim"  # nothing helps but a pass of our own


@dataclass(frozen=True)
class PassRecord:
    """What the store holds about a source's passes, as the decision needs it."""

    generation: int = 0
    clearance_valid: bool = False
    pass_started_at: dt.datetime | None = None
    last_attempt_at: dt.datetime | None = None


def plan_pass(
    record: PassRecord, *, seen_generation: int, now: dt.datetime, interval: dt.timedelta, pass_timeout: dt.timedelta
) -> tuple[Step, dt.datetime | None]:
    """What a challenged adapter that last loaded `seen_generation` does now, and until when (WAIT, COOL).

    A newer stored pass wins over everything (it costs nothing to try); a
    pass in flight is waited for until its timeout, after which it counts as
    dead and may be taken over; the interval spaces attempts, successful or
    not, so a site that challenges every request is not passed in a loop.
    """
    if record.generation > seen_generation and record.clearance_valid:
        return Step.REUSE, None
    if record.pass_started_at is not None and now < record.pass_started_at + pass_timeout:
        return Step.WAIT, record.pass_started_at + pass_timeout
    if record.last_attempt_at is not None and now < record.last_attempt_at + interval:
        return Step.COOL, record.last_attempt_at + interval
    return Step.CLAIM, None


# --- the store and the ways to pass ------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    step: Step
    until: dt.datetime | None
    generation: int
    clearance: Clearance | None  # the stored one (REUSE)
    claimed: bool  # CLAIM only: whether this caller now owns the pass


class ClearanceStore(Protocol):
    """Where a source's passes live: the database (`crawler.clearance.rows`) or, for a probe, memory."""

    def load(self, source_id: str) -> tuple[Clearance | None, int]:
        """The valid stored clearance (None when absent or expired) and its generation."""

    def plan(self, source_id: str, *, seen_generation: int, owner: str, claim: bool) -> Planned:
        """Decide (`plan_pass`) under the row's lock; with `claim`, a CLAIM marks the pass as this owner's."""

    def store_pass(self, source_id: str, *, owner: str, clearance: Clearance) -> int:
        """Keep a successful pass; returns its generation."""

    def record_failure(self, source_id: str, *, owner: str | None, message: str) -> None:
        """Note why a pass failed (or could not be tried); ends `owner`'s claim."""


class MemoryStore:
    """A store that lives as long as one probe of a site not added yet: passes kept, no rate limit shared."""

    def __init__(self) -> None:
        self.clearance: Clearance | None = None
        self.generation = 0
        self.last_failure = ""

    def load(self, source_id: str) -> tuple[Clearance | None, int]:
        return self.clearance, self.generation

    def plan(self, source_id: str, *, seen_generation: int, owner: str, claim: bool) -> Planned:
        if self.generation > seen_generation and self.clearance is not None:
            return Planned(Step.REUSE, None, self.generation, self.clearance, False)
        return Planned(Step.CLAIM, None, self.generation, None, claim)

    def store_pass(self, source_id: str, *, owner: str, clearance: Clearance) -> int:
        self.clearance, self.generation = clearance, self.generation + 1
        return self.generation

    def record_failure(self, source_id: str, *, owner: str | None, message: str) -> None:
        self.last_failure = message
