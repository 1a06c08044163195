"""The per-source limiter shared through the database: every worker on every host takes its tokens here.

One `SourceThrottle` row per source holds the token bucket and the cooldown;
`SourceSlot` rows are the requests in flight. On PostgreSQL a request's
token is one statement in autocommit: it locks the source's row, refills the
bucket by the database clock and takes a token or learns how long to wait
(`TAKE_TOKENS`), so the row is locked for one statement, not for a
transaction of six round trips. A fast source (tens of requests a second)
takes up to `BATCH_TOKENS` at once and its process spends them within
`HOLD_SECS`; such takes leave a reserve in the bucket so the bound holds for
the requests as sent (`politeness.batch_reserve`). A cooldown another worker
starts reaches those held tokens' requests within `HOLD_SECS`, like a request
granted just before it. A slot is taken in a short transaction that
locks the row, counts the live slots and inserts one (on SQLite every
transaction is `BEGIN IMMEDIATE`, which serialises the same way, and tokens
go that way too); the slot row then stays with the process between its
requests (`crawler.politeness.slots`), still counted and still expiring on its
own, so a job asking for page after page pays one statement a request. No
advisory locks and no session state, so it holds behind PgBouncer in
transaction pooling, where each transaction may run on a different server
session.

Waits are bounded and interruptible: a waiter sleeps exactly until the next
token (capped, then looks again, since another worker may have taken it), on
the job's cancel event, and gives up as an outage after `max_wait_secs`. A
job's limiter (`yield_when_busy`) does not wait for tokens or slots other
jobs have: it raises `SourceBusy` and the worker gives the job back.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from crawler.models import SourceSlot, SourceThrottle
from crawler.politeness.slots import BUSY, HELD_TOKENS, IdleSlots
from jobs.errors import JobCancelled
from sources.errors import SourceBusy, SourceCoolingDown, SourceUnavailable
from sources.politeness.gate import NOTHING_HELD, Held
from sources.politeness.rules import (
    BATCH_TOKENS,
    BUSY_HOLD_SECS,
    HOLD_SECS,
    Decision,
    Politeness,
    Verdict,
    batch_reserve,
    cooling_ends,
    decide,
    gives_way,
    refill,
)

logger = logging.getLogger(__name__)

# The longest single sleep: a waiter looks again at least this often, so a
# cooldown another worker extended or a cancel is never missed for long.
MAX_SLEEP_SECS = 2.0


def slot_ttl() -> timedelta:
    """How long a slot lives without a keep-alive: a response slower than the HTTP timeout has failed anyway."""
    return timedelta(seconds=settings.CRAWLER_HTTP_TIMEOUT_SECS + 30)


def _db_now() -> datetime:
    """The database's clock, so workers on hosts whose clocks drift agree on the bucket."""
    if connection.vendor != "postgresql":
        return timezone.now()
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]


# A request's token in one statement (a fast source's: up to `want` of them).
# `old` locks the source's row and reads it as it is once the lock is ours
# (READ COMMITTED re-reads a row it waited for); the bucket is refilled by the
# database clock as `refill` does; the UPDATE takes up to `want` whole tokens,
# leaving `reserve` in the bucket, unless the source is cooling. The
# caller decides a wait from what comes back with `decide`, on the same numbers.
TAKE_TOKENS = """
WITH old AS (
    SELECT source_id, tokens, refilled_at, cooling_until, cooling_reason, statement_timestamp() AS now
    FROM crawler_source_throttle WHERE source_id = %(source)s FOR UPDATE
), bucket AS (
    SELECT old.*, CASE
        WHEN refilled_at IS NULL THEN %(burst)s::float8
        ELSE LEAST(%(burst)s::float8,
                   tokens + GREATEST(EXTRACT(EPOCH FROM now - refilled_at)::float8, 0) * %(rate)s::float8)
    END AS refilled
    FROM old
), verdict AS (
    SELECT bucket.*, CASE
        WHEN cooling_until IS NOT NULL AND cooling_until > now THEN 0
        ELSE GREATEST(0, LEAST(%(want)s::int, FLOOR(refilled - %(reserve)s::float8)::int))
    END AS granted
    FROM bucket
), taken AS (
    UPDATE crawler_source_throttle AS t
    SET tokens = verdict.refilled - verdict.granted, refilled_at = verdict.now, updated_at = verdict.now
    FROM verdict WHERE t.source_id = verdict.source_id AND verdict.granted > 0
    RETURNING t.source_id
)
SELECT granted, refilled, now, cooling_until, cooling_reason FROM verdict
"""


class Slot:
    """One in-flight request's `SourceSlot` row; released back to the process's idle slots, not deleted."""

    def __init__(self, slot_id: uuid.UUID, ttl: timedelta, owner: SourceLimiter) -> None:
        self.id = slot_id
        self.ttl = ttl
        self.owner = owner
        self._renewed = time.monotonic()
        self._released = False

    def keep_alive(self) -> None:
        # Per streamed chunk: touch the row only once a third of the TTL has passed.
        if self._released or time.monotonic() - self._renewed < self.ttl.total_seconds() / 3:
            return
        self._renewed = time.monotonic()
        SourceSlot.objects.filter(id=self.id).update(expires_at=Now() + self.ttl)

    def reclaim(self) -> bool:
        """Take an idle row back into use; False when it expired meanwhile (another worker may have its share)."""
        self._released = False
        if time.monotonic() - self._renewed < self.ttl.total_seconds() / 3:
            return True
        self._renewed = time.monotonic()
        return bool(SourceSlot.objects.filter(id=self.id, expires_at__gt=Now()).update(expires_at=Now() + self.ttl))

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        self.owner.give_back(self)


# This process's idle slot rows, shared by every limiter of the same source here.
IDLE_SLOTS: IdleSlots[Slot] = IdleSlots()


def delete_slots(slots: list[Slot]) -> None:
    if not slots:
        return
    ids = [slot.id for slot in slots]
    try:
        SourceSlot.objects.filter(id__in=ids)._raw_delete(SourceSlot.objects.db)
    except Exception:  # a database blip: the slots expire on their own
        logger.warning("limiter: releasing slots %s failed; they expire by themselves", ids, exc_info=True)


@dataclass(frozen=True)
class Attempt:
    decision: Decision
    held: Held | None  # set when granted
    cooling_until: datetime | None = None
    cooling_reason: str = ""
    others_asking: bool = False  # another job of the source holds a slot (as far as this look could tell)


class SourceLimiter:
    """The database-backed `RequestGate` of one source."""

    def __init__(
        self,
        source_id: str,
        policy: Politeness,
        *,
        cancel: threading.Event | None = None,
        max_wait_secs: float | None = None,
        yield_when_busy: bool = False,
    ) -> None:
        self.source_id = source_id
        self.policy = policy
        self.cancel = cancel or threading.Event()
        ttl = slot_ttl()
        # Long enough to outlast a slot leaked by a killed worker.
        self.max_wait_secs = max_wait_secs if max_wait_secs is not None else 2 * ttl.total_seconds()
        self.yield_when_busy = yield_when_busy
        self.granted = 0  # requests this limiter let out
        self.gave_way = False  # it raised SourceBusy: the source is others', its busy mark stays
        self._closed = False
        IDLE_SLOTS.opened(source_id)

    # --- the gate ----------------------------------------------------------------------

    def acquire(self, *, slot: bool = True) -> Held:
        deadline = time.monotonic() + self.max_wait_secs
        while True:
            attempt = self.try_acquire(slot=slot)
            if attempt.held is not None:
                self.granted += 1
                return attempt.held
            decision = attempt.decision
            if decision.verdict is Verdict.COOLING and decision.wait_secs > settings.CRAWLER_COOLDOWN_WAIT_SECS:
                assert attempt.cooling_until is not None
                raise SourceCoolingDown(
                    f"source {self.source_id!r} is cooling down until {attempt.cooling_until.isoformat()} "
                    f"({attempt.cooling_reason})",
                    source_id=self.source_id,
                    until=attempt.cooling_until,
                )
            started = self.granted > 0
            others = attempt.others_asking or IDLE_SLOTS.open_elsewhere(self.source_id)
            if self.yield_when_busy and gives_way(
                decision, rate=self.policy.rate_limit, started=started, others_asking=others
            ):
                self.gave_way = True
                BUSY.mark(self.source_id, max(BUSY_HOLD_SECS, decision.wait_secs))
                raise SourceBusy(
                    f"source {self.source_id!r} is busy with other jobs ({decision.verdict.value}, "
                    f"next request in {decision.wait_secs:.2f} s): giving the thread back",
                    source_id=self.source_id,
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SourceUnavailable(
                    f"source {self.source_id!r}: no request slot within {self.max_wait_secs:.0f} s "
                    f"(max_concurrency {self.policy.max_concurrency}, last verdict {decision.verdict.value})"
                )
            self._sleep(min(decision.wait_secs, MAX_SLEEP_SECS, remaining))

    def close(self) -> None:
        """The adapter is done: its idle slot rows go unless other open adapters of the source here can use them."""
        if self._closed:
            return
        self._closed = True
        delete_slots(IDLE_SLOTS.closed(self.source_id))
        if self.granted and not self.gave_way:
            BUSY.clear(self.source_id)  # the job that had the source's requests is over

    def give_back(self, held: Slot) -> None:
        if self._closed:
            delete_slots([held])
            return
        delete_slots(IDLE_SLOTS.give_back(self.source_id, held))

    def cool_down(self, secs: float, reason: str) -> datetime:
        HELD_TOKENS.drop(self.source_id)
        with transaction.atomic():
            row = self._locked_row()
            now = _db_now()
            until = cooling_ends(row.cooling_until, now, secs)
            row.cooling_until, row.cooling_reason = until, reason
            # The cooldown ends with one token, not a full burst: a site that
            # just said "too many" is eased back into at the plain rate.
            row.tokens, row.refilled_at = 1.0, until
            row.save(update_fields=["cooling_until", "cooling_reason", "tokens", "refilled_at", "updated_at"])
        logger.warning("source %s cooling down until %s: %s", self.source_id, until.isoformat(), reason)
        return until

    # --- one transaction -----------------------------------------------------------------

    def try_acquire(self, *, slot: bool = True) -> Attempt:
        """Take a token (and a slot) now, or say how long to wait.

        A slot row this process keeps idle is reused with a token-only
        statement; otherwise one short transaction counts and inserts a slot.
        """
        reused = self._reuse_idle_slot() if slot else None
        if slot and reused is None:
            return self._transaction(slot=True)
        attempt = self._take_token()
        if reused is None:
            return attempt
        if attempt.held is None:
            reused.release()  # no token: the row stays idle for the next look
            return attempt
        return Attempt(attempt.decision, reused)

    def _reuse_idle_slot(self) -> Slot | None:
        while (held := IDLE_SLOTS.take(self.source_id)) is not None:
            held.owner = self
            if held.reclaim():
                return held
        return None

    def _take_token(self) -> Attempt:
        if HELD_TOKENS.take(self.source_id):
            return Attempt(Decision(Verdict.GRANTED, 0.0), NOTHING_HELD)
        if connection.vendor != "postgresql":
            return self._transaction(slot=False)
        reserve = batch_reserve(self.policy)
        params = {
            "source": self.source_id,
            "burst": self.policy.burst,
            "rate": self.policy.rate_limit,
            "want": 1 if reserve is None else BATCH_TOKENS,
            "reserve": reserve or 0.0,
        }
        # Before the statement is sent, so the hold never outlasts HOLD_SECS from the database's grant.
        hold_until = time.monotonic() + HOLD_SECS
        with connection.cursor() as cursor:
            cursor.execute(TAKE_TOKENS, params)
            row = cursor.fetchone()
            if row is None:  # first use of the source anywhere: a full bucket
                SourceThrottle.objects.bulk_create([SourceThrottle(source_id=self.source_id)], ignore_conflicts=True)
                cursor.execute(TAKE_TOKENS, params)
                row = cursor.fetchone()
        granted, tokens, now, cooling_until, cooling_reason = row
        if granted:
            HELD_TOKENS.keep(self.source_id, granted - 1, hold_until)
            return Attempt(Decision(Verdict.GRANTED, tokens - granted), NOTHING_HELD)
        decision = decide(
            tokens - params["reserve"],
            in_flight=0,
            policy=self.policy,
            now=now,
            cooling_until=cooling_until,
            need_slot=False,
        )
        return Attempt(decision, None, cooling_until, cooling_reason)

    def _transaction(self, *, slot: bool) -> Attempt:
        """One short transaction that locks the source's row: a token, and with `slot` a new slot row."""
        policy = self.policy
        with transaction.atomic():
            row = self._locked_row()
            now = _db_now()
            slots = SourceSlot.objects.filter(source_id=self.source_id)
            in_flight = slots.filter(expires_at__gt=now).count() if slot else 0
            tokens = refill(row.tokens, row.refilled_at, now, rate=policy.rate_limit, burst=policy.burst)
            reserve = batch_reserve(policy) or 0.0  # a fast source's every take leaves it (`batch_reserve`)
            decision = decide(
                tokens - reserve,
                in_flight=in_flight,
                policy=policy,
                now=now,
                cooling_until=row.cooling_until,
                need_slot=slot,
            )
            if not decision.granted:
                return Attempt(decision, None, row.cooling_until, row.cooling_reason, others_asking=in_flight > 0)
            row.tokens, row.refilled_at = decision.tokens + reserve, now
            row.save(update_fields=["tokens", "refilled_at", "updated_at"])
            if not slot:
                return Attempt(decision, NOTHING_HELD)
            slots.filter(expires_at__lte=now).delete()  # leaked by killed workers
            ttl = slot_ttl()
            taken = SourceSlot.objects.create(source_id=self.source_id, acquired_at=now, expires_at=now + ttl)
        return Attempt(decision, Slot(taken.id, ttl, self))

    def _locked_row(self) -> SourceThrottle:
        rows = SourceThrottle.objects.select_for_update()
        row = rows.filter(source_id=self.source_id).first()
        if row is None:
            # First use of the source anywhere: a full bucket (refilled_at None).
            SourceThrottle.objects.bulk_create([SourceThrottle(source_id=self.source_id)], ignore_conflicts=True)
            row = rows.get(source_id=self.source_id)
        return row

    def _sleep(self, secs: float) -> None:
        if self.cancel.wait(max(secs, 0.0)):
            raise JobCancelled(f"cancelled while waiting to request source {self.source_id!r}")


# --- for the worker loop and the dashboard -------------------------------------------------


def _cooling(at: datetime | None = None) -> QuerySet[SourceThrottle]:
    """The throttle rows whose cooldown has not ended at `at` (default: the database's now)."""
    return SourceThrottle.objects.filter(cooling_until__gt=at or Now())


def cooling_sources() -> set[str]:
    """Sources cooling down right now: the worker loop leases none of their jobs."""
    return set(_cooling().values_list("source_id", flat=True))


def end_cooldown(source_id: str) -> bool:
    """End `source_id`'s cooldown now (an operator's call); False when it was not cooling."""
    return bool(
        _cooling().filter(source_id=source_id).update(cooling_until=None, cooling_reason="", updated_at=timezone.now())
    )


def cooling_status(now: datetime | None = None) -> list[dict[str, Any]]:
    """The sources cooling down at `now`, soonest end first: what the dashboard and status API show."""
    rows = _cooling(now or timezone.now()).order_by("cooling_until")
    return [
        {"source_id": row.source_id, "until": row.cooling_until.isoformat(), "reason": row.cooling_reason}
        for row in rows
        if row.cooling_until is not None
    ]
