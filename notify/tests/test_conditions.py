"""Health conditions, pure: when an alert fires, when a condition is forgotten, what a source's jobs say."""

from __future__ import annotations

import pytest

from notify.health.conditions import SourceJobCounts, source_job_conditions, transitions

pytestmark = pytest.mark.sqlite_ok  # pure: no database


def test_a_new_condition_starts_and_a_held_one_does_not_start_again():
    change = transitions({"jobs.mostly_dead:a"}, {"jobs.mostly_dead:a": "m", "disk.floor": "d"})
    assert change.started == ("disk.floor",)
    assert change.cleared == ()


def test_a_condition_that_no_longer_holds_clears():
    change = transitions({"disk.floor", "session.expired:x"}, {"disk.floor": "d"})
    assert change.cleared == ("session.expired:x",)


def test_a_failed_probe_clears_nothing_of_its_own():
    change = transitions({"session.expired:x", "disk.floor"}, {}, failed_probes={"session"})
    assert change.cleared == ("disk.floor",)


def test_a_source_with_failures_and_no_success_is_unreachable():
    (condition,) = source_job_conditions({"s": SourceJobCounts(done=0, dead=2, retrying=3)}, min_failures=5)
    assert condition.key == "jobs.unreachable:s"


def test_a_source_with_more_dead_than_done_has_mostly_dead_jobs():
    (condition,) = source_job_conditions({"s": SourceJobCounts(done=4, dead=5)}, min_failures=5)
    assert condition.key == "jobs.mostly_dead:s"
    assert "5 dead against 4 done" in condition.message


def test_few_failures_or_mostly_done_is_healthy():
    counts = {"a": SourceJobCounts(done=0, dead=4), "b": SourceJobCounts(done=10, dead=6), "c": SourceJobCounts()}
    assert source_job_conditions(counts, min_failures=5) == []
