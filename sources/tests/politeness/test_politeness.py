"""The limiter's pure decisions: token bucket arithmetic, slot and cooldown verdicts, Retry-After, settings keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from sources.config import HtmlSourceConfig
from sources.demo import demo_settings
from sources.errors import SourceConfigError
from sources.politeness.rules import (
    Decision,
    Politeness,
    Verdict,
    cooldown_secs,
    cooling_ends,
    decide,
    gives_way,
    parse_retry_after,
    refill,
    secs_until_token,
)

NOW = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)
POLICY = Politeness(rate_limit=4.0, burst=2, max_concurrency=2)


def at(secs: float) -> datetime:
    return NOW + timedelta(seconds=secs)


# --- the bucket ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "wait", "started", "others", "expected"),
    [
        (Verdict.WAIT_SLOT, 0.05, True, False, True),  # every slot is another job's until it ends
        (Verdict.WAIT_TOKEN, 0.25, False, False, False),  # one interval (4/s): the job's own pace
        (Verdict.WAIT_TOKEN, 0.05, False, True, True),  # empty bucket, another job has a slot: its tokens
        (Verdict.WAIT_TOKEN, 0.05, True, True, False),  # started: only a long wait says it is shared
        (Verdict.WAIT_TOKEN, 0.40, False, False, True),  # 1.6 intervals: someone else takes the tokens
        (Verdict.WAIT_TOKEN, 0.40, True, False, False),  # mid-chapter: it holds on a little longer
        (Verdict.WAIT_TOKEN, 0.45, True, False, True),  # 1.8 intervals: two jobs share the source
        (Verdict.COOLING, 60.0, False, True, False),  # a cooldown is deferred or waited, never given way to
        (Verdict.GRANTED, 0.0, False, True, False),
    ],
)
def test_a_job_gives_way_when_other_jobs_have_its_sources_requests(verdict, wait, started, others, expected):
    decision = Decision(verdict, 0.0, wait)
    assert gives_way(decision, rate=POLICY.rate_limit, started=started, others_asking=others) is expected


def test_a_bucket_never_used_is_full():
    assert refill(0.0, None, NOW, rate=4.0, burst=2) == 2.0


def test_refill_adds_rate_tokens_a_second_up_to_burst():
    assert refill(0.0, NOW, at(0.25), rate=4.0, burst=2) == pytest.approx(1.0)
    assert refill(0.5, NOW, at(0.25), rate=4.0, burst=2) == pytest.approx(1.5)
    assert refill(0.0, NOW, at(60), rate=4.0, burst=2) == 2.0


def test_refill_from_a_future_stamp_adds_nothing_and_takes_nothing():
    assert refill(1.0, at(5), NOW, rate=4.0, burst=2) == 1.0


def test_the_wait_for_a_token_is_exactly_the_missing_fraction_over_the_rate():
    assert secs_until_token(0.0, rate=4.0) == pytest.approx(0.25)
    assert secs_until_token(0.5, rate=2.0) == pytest.approx(0.25)
    assert secs_until_token(1.0, rate=2.0) == 0.0


def test_a_granted_request_spends_one_token():
    decision = decide(2.0, in_flight=0, policy=POLICY, now=NOW, cooling_until=None)
    assert decision.granted and decision.tokens == 1.0


def test_an_empty_bucket_waits_until_the_next_token():
    decision = decide(0.5, in_flight=0, policy=POLICY, now=NOW, cooling_until=None)
    assert decision.verdict is Verdict.WAIT_TOKEN
    assert decision.wait_secs == pytest.approx(0.125)
    assert decision.tokens == 0.5  # nothing spent


def test_all_slots_taken_waits_for_a_slot_without_spending_a_token():
    decision = decide(2.0, in_flight=2, policy=POLICY, now=NOW, cooling_until=None)
    assert decision.verdict is Verdict.WAIT_SLOT and decision.tokens == 2.0
    assert 0.05 <= decision.wait_secs <= 0.25


def test_a_redirect_hop_needs_a_token_but_no_further_slot():
    assert decide(1.0, in_flight=2, policy=POLICY, now=NOW, cooling_until=None, need_slot=False).granted


def test_cooling_wins_over_tokens_and_slots_and_waits_until_its_end():
    decision = decide(2.0, in_flight=0, policy=POLICY, now=NOW, cooling_until=at(7))
    assert decision.verdict is Verdict.COOLING and decision.wait_secs == pytest.approx(7)
    assert decide(2.0, in_flight=0, policy=POLICY, now=at(7), cooling_until=at(7)).granted


def test_a_bucket_run_never_grants_more_than_burst_plus_rate_in_any_second():
    # Greedy client asking every millisecond for 5 s: the bound the process tests measure.
    tokens, stamp, grants = 0.0, None, []
    for ms in range(5000):
        now = at(ms / 1000)
        available = refill(tokens, stamp, now, rate=POLICY.rate_limit, burst=POLICY.burst)
        decision = decide(available, in_flight=0, policy=POLICY, now=now, cooling_until=None)
        if decision.granted:
            tokens, stamp = decision.tokens, now
            grants.append(ms)
    # Closed one-second windows: over T seconds a bucket grants at most burst + rate * T.
    busiest = max(sum(1 for g in grants if start <= g <= start + 1000) for start in range(4000))
    assert busiest == POLICY.burst + POLICY.rate_limit
    assert len(grants) == POLICY.burst + 4 * 5 - 1  # burst, then one every 250 ms


# --- Retry-After ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("120", 120.0),
        (" 3 ", 3.0),
        ("0", 0.0),
        ("99999", 3600.0),
        (None, None),
        ("soon", None),
        ("-5", None),
        ("\u00b2", None),
        ("\u0663", None),
        ("9" * 5000, 3600.0),
    ],  # unicode digits float() refuses or misreads
)
def test_retry_after_in_seconds_is_read_and_capped(header, expected):
    assert parse_retry_after(header, NOW, cap_secs=3600) == expected


def test_retry_after_as_an_http_date_is_the_time_until_then():
    header = format_datetime(at(90), usegmt=True)
    assert parse_retry_after(header, NOW, cap_secs=3600) == pytest.approx(90)


def test_retry_after_dates_in_the_past_are_zero_and_far_ones_are_capped():
    assert parse_retry_after(format_datetime(at(-30), usegmt=True), NOW, cap_secs=3600) == 0.0
    assert parse_retry_after(format_datetime(at(86400 * 7), usegmt=True), NOW, cap_secs=3600) == 3600.0


@pytest.mark.parametrize(
    ("status", "header", "expected"),
    [
        (429, "5", 5.0),
        (429, None, 60.0),  # "too many", no how long: the default cooldown
        (429, "garbage", 60.0),
        (503, "5", 5.0),
        (503, None, None),  # a bare 503 is an outage, not a cooldown
        (500, "5", None),
        (200, "5", None),
    ],
)
def test_which_answers_cool_a_source_down(status, header, expected):
    assert cooldown_secs(status, header, NOW, default_secs=60, cap_secs=3600) == expected


def test_a_new_cooldown_never_shortens_a_running_one():
    assert cooling_ends(None, NOW, 10) == at(10)
    assert cooling_ends(at(30), NOW, 10) == at(30)
    assert cooling_ends(at(5), NOW, 10) == at(10)


# --- settings keys -------------------------------------------------------------------------


def test_the_defaults_are_two_a_second_burst_two_two_in_flight():
    config = HtmlSourceConfig.from_settings({"preset": "madara"}, source_id="t")
    assert config.politeness == Politeness(rate_limit=2.0, burst=2, max_concurrency=2)


def test_a_source_overrides_its_limits_in_its_settings():
    config = HtmlSourceConfig.from_settings(demo_settings(rate_limit=0.5, burst=1, max_concurrency=1), source_id="t")
    assert config.politeness == Politeness(rate_limit=0.5, burst=1, max_concurrency=1)


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("rate_limit", 0, "between 0.01 and 1000"),
        ("rate_limit", "fast", "between 0.01 and 1000"),
        ("rate_limit", True, "between 0.01 and 1000"),
        ("burst", 0, "whole number between 1 and 1000"),
        ("burst", 1.5, "whole number between 1 and 1000"),
        ("max_concurrency", 0, "whole number between 1 and 64"),
        ("max_concurrency", 65, "whole number between 1 and 64"),
    ],
)
def test_a_bad_limit_names_the_source_and_the_key(key, value, why):
    with pytest.raises(SourceConfigError) as caught:
        HtmlSourceConfig.from_settings(demo_settings(**{key: value}), source_id="shelf")
    assert f"source 'shelf': settings key {key!r}" in str(caught.value)
    assert why in str(caught.value)
