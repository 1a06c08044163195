"""Truth tables of the circuit breaker's pure decisions (time passed in, never slept)."""

from datetime import UTC, datetime, timedelta

import pytest

from jobs.worker.circuit import (
    CircuitState,
    JobTimedOut,
    after_failure,
    after_success,
    counts_toward_circuit,
    is_open,
    open_until,
)
from sources.errors import CrawlerError, ImageRejected, NotFound, SessionExpired, SourceUnavailable

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
COOLDOWN = timedelta(seconds=120)

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize(
    ("failures", "threshold", "expected"),
    [
        (0, 3, None),
        (2, 3, None),
        (3, 3, NOW + COOLDOWN),
        (7, 3, NOW + COOLDOWN),
        (1, 1, NOW + COOLDOWN),
    ],
)
def test_open_until_trips_at_the_threshold(failures, threshold, expected):
    assert open_until(failures, threshold, COOLDOWN, NOW) == expected


@pytest.mark.parametrize(
    ("state", "now", "expected"),
    [
        (CircuitState(), NOW, False),
        (CircuitState(3, NOW + COOLDOWN), NOW, True),
        (CircuitState(3, NOW + COOLDOWN), NOW + COOLDOWN - timedelta(seconds=1), True),
        (CircuitState(3, NOW + COOLDOWN), NOW + COOLDOWN, False),
    ],
)
def test_is_open_until_the_cooldown_passes(state, now, expected):
    assert is_open(state, now) is expected


def test_breaker_opens_after_threshold_consecutive_failures():
    state = CircuitState()
    for _ in range(2):
        state = after_failure(state, threshold=3, cooldown=COOLDOWN, now=NOW)
        assert not is_open(state, NOW)
    state = after_failure(state, threshold=3, cooldown=COOLDOWN, now=NOW)
    assert state.open_until == NOW + COOLDOWN


def test_failures_of_jobs_already_in_flight_do_not_extend_an_open_window():
    state = CircuitState(3, NOW + COOLDOWN)
    later = NOW + timedelta(seconds=30)
    assert after_failure(state, threshold=3, cooldown=COOLDOWN, now=later).open_until == NOW + COOLDOWN


def test_half_open_breaker_reopens_on_the_first_failure_after_the_cooldown():
    state = CircuitState(3, NOW + COOLDOWN)
    later = NOW + COOLDOWN + timedelta(seconds=1)
    state = after_failure(state, threshold=3, cooldown=COOLDOWN, now=later)
    assert state.open_until == later + COOLDOWN


def test_a_success_closes_the_breaker():
    assert after_success(CircuitState(5, NOW + COOLDOWN)) == CircuitState()


@pytest.mark.parametrize(
    ("error", "counts"),
    [
        (SourceUnavailable("503"), True),
        (JobTimedOut(), True),
        (ConnectionRefusedError(), True),
        (TimeoutError(), True),
        (NotFound("404"), False),
        (ImageRejected("html"), False),
        (CrawlerError("bad"), False),
        (SessionExpired("wall"), False),
        (ValueError("bug"), False),
    ],
)
def test_only_outage_shaped_failures_count_toward_the_circuit(error, counts):
    assert counts_toward_circuit(error) is counts
