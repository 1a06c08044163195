"""The gate every outgoing request of a source passes: a token, a slot, and the 429/503 check on the answer.

`SourceHttp` (plain HTTP: pages, POSTs, images, covers) and the html
adapter's browser navigations are the only callers, so no request of a source
can skip it. The shared implementation is `crawler.politeness.limiter.SourceLimiter`
(through the database); `UNLIMITED` serves adapters built without one (tests
and benchmarks that construct an adapter by hand).

This module stays free of models, so importing the adapters never needs the
app registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings
from django.utils import timezone

from sources.errors import SourceCoolingDown
from sources.politeness.rules import cooldown_secs


class Held(Protocol):
    """A request slot taken from the gate: released when the response is done with."""

    def keep_alive(self) -> None:
        """Called while a long response streams, so its slot does not expire under it."""

    def release(self) -> None: ...


class RequestGate(Protocol):
    source_id: str

    def acquire(self, *, slot: bool = True) -> Held:
        """Wait for a token (and, with `slot`, a free in-flight slot); raise SourceCoolingDown while cooling."""

    def cool_down(self, secs: float, reason: str) -> datetime:
        """Stop every worker from requesting this source for `secs`; returns when the cooldown ends."""

    def close(self) -> None:
        """The adapter is done with the source: give up what is kept between its requests."""


class _NothingHeld:
    def keep_alive(self) -> None:
        pass

    def release(self) -> None:
        pass


NOTHING_HELD = _NothingHeld()


class Unlimited:
    """No limit and nothing shared; a 429 still raises SourceCoolingDown so the job is deferred."""

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id

    def acquire(self, *, slot: bool = True) -> Held:
        return NOTHING_HELD

    def cool_down(self, secs: float, reason: str) -> datetime:
        return timezone.now() + timedelta(seconds=secs)

    def close(self) -> None:
        pass


@contextmanager
def passing(gate: RequestGate, *, slot: bool = True) -> Iterator[Held]:
    """Hold a token and a slot for the length of the block."""
    held = gate.acquire(slot=slot)
    try:
        yield held
    finally:
        held.release()


def check_answer(gate: RequestGate, status: int, retry_after: str | None, url: str) -> None:
    """Cool the whole source down when an answer says so (429, or 503 with Retry-After), then raise.

    The raise turns into a deferred job (`RetryLater`), never a burnt attempt.
    """
    secs = cooldown_secs(
        status,
        retry_after,
        timezone.now(),
        default_secs=float(settings.CRAWLER_DEFAULT_COOLDOWN_SECS),
        cap_secs=float(settings.CRAWLER_RETRY_AFTER_MAX_SECS),
    )
    if secs is None:
        return
    header = f"Retry-After {retry_after!r}" if retry_after is not None else "no Retry-After"
    reason = f"{url} answered {status} ({header})"
    until = gate.cool_down(secs, reason)
    raise SourceCoolingDown(
        f"source {gate.source_id!r}: {reason}; every worker leaves it alone until {until.isoformat()}",
        source_id=gate.source_id,
        until=until,
    )
