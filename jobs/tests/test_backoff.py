"""Retry backoff and jitter: pure functions, pinned exactly like the reference table."""

from datetime import timedelta

from jobs.retry import apply_jitter, backoff_base, backoff_for


def test_backoff_base_grows_exponentially_and_caps_at_one_hour():
    # attempts == 1 -> 60 s, doubling each step.
    assert backoff_base(1) == timedelta(seconds=60)
    assert backoff_base(2) == timedelta(seconds=120)
    assert backoff_base(3) == timedelta(seconds=240)
    assert backoff_base(4) == timedelta(seconds=480)
    assert backoff_base(5) == timedelta(seconds=960)
    assert backoff_base(6) == timedelta(seconds=1920)
    # 7th: 60 * 64 = 3840 -> capped to 3600.
    assert backoff_base(7) == timedelta(seconds=3600)
    assert backoff_base(20) == timedelta(seconds=3600)
    # Absurd counts cannot overflow the shift.
    assert backoff_base(10_000) == timedelta(seconds=3600)
    # Garbage / zero / negatives stay sane.
    assert backoff_base(0) == timedelta(seconds=60)
    assert backoff_base(-5) == timedelta(seconds=60)


def test_apply_jitter_stays_within_plus_minus_twenty_percent():
    base = timedelta(seconds=100)
    # Lower bound (jitter = 0.0) -> 0.8x.
    assert apply_jitter(base, 0.0) == timedelta(seconds=80)
    # Midpoint (jitter = 0.5) -> 1.0x.
    assert apply_jitter(base, 0.5) == timedelta(seconds=100)
    # Upper end (jitter -> 1.0) -> ~1.2x.
    assert apply_jitter(base, 1.0) == timedelta(seconds=120)
    # Out-of-range inputs are clamped, never raise.
    assert apply_jitter(base, -3.0) == timedelta(seconds=80)
    assert apply_jitter(base, 9.0) == timedelta(seconds=120)


def test_apply_jitter_rounds_to_whole_seconds():
    assert apply_jitter(timedelta(seconds=61), 0.0) == timedelta(seconds=49)  # 48.8 -> 49


def test_backoff_for_random_jitter_stays_in_band():
    # The production wrapper draws its own randomness; across many draws the
    # result for a mid-range attempt always lands within the jitter band.
    base = backoff_base(3).total_seconds()  # 240 s
    for _ in range(1000):
        v = backoff_for(3).total_seconds()
        assert base * 0.8 - 1.0 <= v <= base * 1.2 + 1.0, f"jittered backoff {v} outside band of base {base}"
