"""The many-sources verdict: a source is over its limit only past what its token bucket allows, under it below 90 %."""

from __future__ import annotations

from crawling.rates import common_window, most_in_window, source_rate


def test_a_source_at_its_rate_after_a_full_bucket_is_neither_over_nor_under():
    # Two requests at once (the burst), then one every 0.2 s: 5/s for 20 s.
    times = [0.0, 0.0] + [0.2 * i for i in range(1, 101)]
    rate = source_rate(times, rate=5, burst=2)
    assert (rate.over, rate.under, rate.requests) == (False, False, 102)
    assert most_in_window(times, 10.0) == 51  # 0.0 twice, then 0.2 ... 9.8


def test_a_source_faster_than_its_bucket_allows_is_over():
    assert source_rate([0.1 * i for i in range(101)], rate=5, burst=2).over  # 10/s


def test_a_source_that_got_less_than_nine_tenths_of_its_rate_is_under():
    assert source_rate([0.25 * i for i in range(81)], rate=5, burst=2).under  # 4/s
    assert not source_rate([0.21 * i for i in range(81)], rate=5, burst=2).under  # 4.76/s


def test_the_common_window_is_where_every_source_was_being_crawled():
    first = source_rate([0.0, 1.0, 2.0, 3.0], rate=5, burst=2)
    second = source_rate([1.5, 2.5, 4.0], rate=5, burst=2)
    assert common_window([first, second]) == (1.5, 3.0)
    assert common_window([first, source_rate([5.0, 6.0], rate=5, burst=2)]) is None
