"""What each source got, from nginx's access log: request rates against each source's token bucket.

A bucket of `burst` tokens refilled at `rate` a second grants at most
`burst + rate * T` requests in any T seconds (`sources.politeness.rules`).
A source is over its limit when any stretch of its requests beats that bound
(checked over its whole active span and over every 10-second window), and
under it when its rate over its active span (first to last request) is more
than 10 % below `rate`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

WINDOW_SECS = 10.0
UNDER = 0.9


@dataclass(frozen=True)
class SourceRate:
    requests: int
    first: float
    last: float
    rate: float  # requests a second over the active span
    peak_window: int  # most requests in any WINDOW_SECS
    over: bool
    under: bool

    @property
    def span(self) -> float:
        return self.last - self.first


def most_in_window(times: list[float], window: float) -> int:
    """The most of the sorted `times` that fall in any half-open interval of `window` seconds."""
    best, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def source_rate(times: Iterable[float], *, rate: float, burst: int) -> SourceRate:
    ordered = sorted(times)
    if not ordered:
        return SourceRate(0, 0.0, 0.0, 0.0, 0, over=False, under=True)
    first, last = ordered[0], ordered[-1]
    span = last - first
    achieved = (len(ordered) - 1) / span if span > 0 else 0.0
    peak = most_in_window(ordered, WINDOW_SECS)
    # One request more than the bound is the log's millisecond rounding at the window's edges.
    over = len(ordered) > burst + rate * span + 1 or peak > burst + rate * WINDOW_SECS + 1
    return SourceRate(len(ordered), first, last, achieved, peak, over=over, under=achieved < UNDER * rate)


def common_window(rates: Iterable[SourceRate]) -> tuple[float, float] | None:
    """The stretch in which every source was being crawled (latest first request to earliest last), if any."""
    rates = list(rates)
    start, end = max(r.first for r in rates), min(r.last for r in rates)
    return (start, end) if end > start else None
