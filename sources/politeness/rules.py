"""How fast a source may be asked: the pure arithmetic behind the shared limiter (`crawler.politeness.limiter`).

A token bucket per source: `burst` tokens at most, refilled at `rate_limit`
tokens a second, one token per request. Over any interval of T seconds a
bucket grants at most `burst + rate_limit * T` requests, which is the bound
the process tests measure. On top of it, at most `max_concurrency` requests
of a source are in flight at once, and a source that answered 429/503 with
Retry-After is cooling down: nobody asks it anything until then.

Everything here takes `now` and returns numbers, so the decisions are tested
without a database, a clock or a sleep; the limiter only stores the state.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

DEFAULT_RATE_LIMIT = 2.0
DEFAULT_BURST = 2
DEFAULT_MAX_CONCURRENCY = 2

# A waiter for a free slot cannot know when one frees up (a response ends), so
# it looks again after this long: often enough to use a slot soon after it
# frees, rarely enough not to hammer the database.
SLOT_POLL_SECS = (0.05, 0.25)


@dataclass(frozen=True)
class Politeness:
    """A source's limits: `rate_limit` requests a second with `burst`, `max_concurrency` in flight."""

    rate_limit: float = DEFAULT_RATE_LIMIT
    burst: int = DEFAULT_BURST
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY


class Verdict(enum.Enum):
    GRANTED = "granted"
    WAIT_TOKEN = "wait_token"  # the bucket is empty: wait exactly until the next token
    WAIT_SLOT = "wait_slot"  # max_concurrency requests in flight: look again shortly
    COOLING = "cooling"  # the source asked us to stay away until `cooling_until`


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    tokens: float  # the bucket after this decision (one token fewer when granted)
    wait_secs: float = 0.0

    @property
    def granted(self) -> bool:
        return self.verdict is Verdict.GRANTED


def refill(tokens: float, refilled_at: datetime | None, now: datetime, *, rate: float, burst: int) -> float:
    """The bucket's tokens at `now`: `tokens` at `refilled_at` plus `rate` a second, never more than `burst`.

    A bucket never used (`refilled_at` None) is full. A `refilled_at` in the
    future (another host's clock, or a cooldown that set it ahead) adds nothing
    rather than taking tokens away.
    """
    if refilled_at is None:
        return float(burst)
    elapsed = max((now - refilled_at).total_seconds(), 0.0)
    return min(float(burst), tokens + elapsed * rate)


def secs_until_token(tokens: float, *, rate: float) -> float:
    """How long until a bucket holding `tokens` (< 1) has a whole token."""
    return max(1.0 - tokens, 0.0) / rate


def decide(
    tokens: float,
    *,
    in_flight: int,
    policy: Politeness,
    now: datetime,
    cooling_until: datetime | None,
    need_slot: bool = True,
) -> Decision:
    """May one more request go out now? `tokens` is the already-refilled bucket.

    Cooling wins over everything; a slot is checked before a token, so a
    request that must wait for a slot does not spend a token meanwhile.
    """
    if cooling_until is not None and cooling_until > now:
        return Decision(Verdict.COOLING, tokens, (cooling_until - now).total_seconds())
    if need_slot and in_flight >= policy.max_concurrency:
        low, high = SLOT_POLL_SECS
        return Decision(Verdict.WAIT_SLOT, tokens, min(max(1.0 / policy.rate_limit, low), high))
    if tokens < 1.0:
        return Decision(Verdict.WAIT_TOKEN, tokens, secs_until_token(tokens, rate=policy.rate_limit))
    return Decision(Verdict.GRANTED, tokens - 1.0)


# --- tokens taken ahead, for fast sources ----------------------------------------------------

# A source asked tens of times a second pays a database statement per token;
# such a source's worker takes up to BATCH_TOKENS in one statement and hands
# them to its requests within HOLD_SECS, dropping what is left. A token sent
# up to HOLD_SECS after it left the bucket could break the bound (burst +
# rate x T over any T), so a batch must leave rate x HOLD_SECS tokens in the
# bucket: what the requests of any T seconds were given then fits in the
# bucket of T + HOLD_SECS less that reserve, which is burst + rate x T again.
HOLD_SECS = 0.1
BATCH_TOKENS = 8


def batch_reserve(policy: Politeness) -> float | None:
    """The tokens a batch take must leave in the bucket, or None when the source takes one token at a time.

    Batches only pay off where the reserve is small beside the burst (a
    quarter at most) and at least a token is taken a HOLD_SECS: a 2/s source
    keeps one statement a request and its whole burst.
    """
    reserve = policy.rate_limit * HOLD_SECS
    if reserve < 1.0 or reserve > policy.burst / 4:
        return None
    return reserve


# --- giving a job's thread back ------------------------------------------------------------

# A job waits for its source's next token in its own thread. A job alone on
# its source never waits much more than one token interval (the bucket
# refills while its request runs); two jobs sharing the source wait about
# two. So a longer wait means other jobs are spending the source's tokens:
# its requests are spoken for, and the thread is worth more to another source.
YIELD_AFTER_INTERVALS = 1.5
YIELD_AFTER_INTERVALS_STARTED = 1.75
# How long the worker leases no other job of a source one of its jobs gave
# back as busy: long enough not to lease and give back in a loop, short
# enough to pick the source up soon after the job that has it ends.
BUSY_HOLD_SECS = 2.0


def gives_way(decision: Decision, *, rate: float, started: bool, others_asking: bool = False) -> bool:
    """Should a job that may give its thread back do so rather than wait for this decision's wait?

    Every slot taken: the slots belong to other jobs, which hold them until
    they end. A job that has not asked anything yet and finds the bucket
    empty while another job of the source holds a slot: that job is spending
    the tokens (a slow site's job leaves tokens in the bucket, and then a
    second job is welcome). No token for longer than 1.5 token intervals
    (1.75 once started): other jobs are taking the source's tokens. A
    cooldown is not the job's to wait out here: the limiter defers long ones
    and waits short ones.
    """
    if decision.verdict is Verdict.WAIT_SLOT:
        return True
    if decision.verdict is Verdict.WAIT_TOKEN:
        if others_asking and not started:
            return True
        intervals = YIELD_AFTER_INTERVALS_STARTED if started else YIELD_AFTER_INTERVALS
        return decision.wait_secs > intervals / rate
    return False


# --- Retry-After -------------------------------------------------------------------------


def parse_retry_after(value: str | None, now: datetime, *, cap_secs: float) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).

    Capped at `cap_secs`, so a hostile or broken header cannot park a source
    for a week. A date in the past is 0. None when the header is absent or
    unreadable (the caller falls back to its default).
    """
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²".isdigit() too, which float() refuses
        return min(float(value), cap_secs)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" dates parse naive; HTTP-dates are always GMT
        when = when.replace(tzinfo=now.tzinfo)
    return min(max((when - now).total_seconds(), 0.0), cap_secs)


def cooldown_secs(
    status: int, retry_after: str | None, now: datetime, *, default_secs: float, cap_secs: float
) -> float | None:
    """How long a response tells the whole source to cool down, or None when it does not.

    429 always cools down (`default_secs` without a readable Retry-After: the
    site said "too many" but not for how long). 503 cools down only with a
    Retry-After; a bare 503 is an outage, left to retries and the circuit breaker.
    """
    if status not in (429, 503):
        return None
    secs = parse_retry_after(retry_after, now, cap_secs=cap_secs)
    if secs is None and status == 429:
        secs = min(default_secs, cap_secs)
    return secs


def cooling_ends(current: datetime | None, now: datetime, secs: float) -> datetime:
    """A new cooldown never shortens one already running (two 429s: the later end wins)."""
    until = now + timedelta(seconds=secs)
    return max(until, current) if current is not None else until
