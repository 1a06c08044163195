"""A site that defends itself: the demo site's request log with timestamps, and 429 + Retry-After over a limit.

Set `DemoSite.throttle` to a `ServerThrottle` and every non-control request
is recorded with its arrival time (`time.monotonic()`) and its concurrency,
then checked against the site's own token bucket: over the limit it answers
429 with a Retry-After, as real sites do to crawlers that hammer them. The
politeness tests read the log to measure what the workers really sent.

The bucket here is written out on its own, not taken from
`sources.politeness.rules`, so a mistake in the crawler's arithmetic cannot
hide behind the same mistake in the server's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate


@dataclass
class ServerThrottle:
    """`rate` requests/s with `burst`; over it, 429 with Retry-After `retry_after_secs`.

    `always`: answer 429 to everything (a site that never lets us in).
    `max_refusals`: stop refusing after that many 429s (None: never stop).
    `http_date`: send Retry-After as an HTTP-date instead of seconds.
    `refuse_next`: answer the next that many requests 429 whatever the rate (a
    test flips it while several workers are mid-crawl).
    """

    rate: float = 1000.0
    burst: int = 1000
    retry_after_secs: int = 2
    always: bool = False
    max_refusals: int | None = None
    http_date: bool = False
    refuse_next: int = 0
    arrivals: list[float] = field(default_factory=list)  # every request, monotonic seconds
    refusals: list[float] = field(default_factory=list)  # the ones answered 429
    max_in_flight: int = 0
    _tokens: float | None = None
    _last: float = 0.0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def serving(self) -> Iterator[str | None]:
        """Around one request: yields the Retry-After value to answer 429 with, or None to serve it."""
        now = time.monotonic()
        with self._lock:
            self.arrivals.append(now)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            refuse = self._over_limit(now)
            if refuse:
                self.refusals.append(now)
        try:
            yield self._retry_after() if refuse else None
        finally:
            with self._lock:
                self._in_flight -= 1

    def _over_limit(self, now: float) -> bool:
        if self.max_refusals is not None and len(self.refusals) >= self.max_refusals:
            return False
        if self.always:
            return True
        if self.refuse_next > 0:
            self.refuse_next -= 1
            return True
        tokens = float(self.burst) if self._tokens is None else self._tokens
        tokens = min(float(self.burst), tokens + (now - self._last) * self.rate)
        self._last = now
        if tokens < 1.0:
            self._tokens = tokens
            return True
        self._tokens = tokens - 1.0
        return False

    def _retry_after(self) -> str:
        if self.http_date:
            return formatdate(time.time() + self.retry_after_secs, usegmt=True)
        return str(self.retry_after_secs)

    # --- what the tests measure --------------------------------------------------------

    def busiest_second(self) -> int:
        """Most requests that arrived within any one-second window (sliding, not clock-aligned)."""
        times = sorted(self.arrivals)
        best, start = 0, 0
        for end, at in enumerate(times):
            while at - times[start] >= 1.0:
                start += 1
            best = max(best, end - start + 1)
        return best

    def arrivals_between(self, start: float, end: float) -> list[float]:
        return [t for t in self.arrivals if start < t < end]
