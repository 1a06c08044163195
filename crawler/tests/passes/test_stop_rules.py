"""Truth tables for the metadata pass's pure decisions (early stop, clean exit, abort)."""

import inspect

import pytest

from crawler.passes.metadata_pass import should_abort_pass, should_mark_clean_exit, should_stop
from crawler.passes.pipeline import MetadataOutcome

pytestmark = pytest.mark.sqlite_ok

UNCHANGED = MetadataOutcome.UNCHANGED
UPDATED = MetadataOutcome.UPDATED
INSERTED = MetadataOutcome.INSERTED


@pytest.mark.parametrize(
    ("outcome", "new_chapters", "last_run_clean", "expected"),
    [
        (UNCHANGED, 0, True, True),
        (UNCHANGED, 0, False, False),
        (UNCHANGED, 1, True, False),
        (UNCHANGED, 3, False, False),
        (UPDATED, 0, True, False),
        (UPDATED, 2, True, False),
        (INSERTED, 0, True, False),
        (INSERTED, 5, False, False),
    ],
)
def test_should_stop_only_on_unchanged_manga_without_new_chapters_after_a_clean_run(
    outcome, new_chapters, last_run_clean, expected
):
    assert should_stop(outcome, new_chapters, last_run_clean) is expected


@pytest.mark.parametrize(
    ("walked_to_completion", "hit_stop_condition", "expected"),
    [
        (True, False, True),
        (False, True, True),
        (True, True, True),
        (False, False, False),
    ],
)
def test_should_mark_clean_exit_truth_table(walked_to_completion, hit_stop_condition, expected):
    assert should_mark_clean_exit(walked_to_completion, hit_stop_condition) is expected


def test_should_mark_clean_exit_has_no_limit_parameter():
    # A caller-imposed cap leaves the tail unvisited; the signature keeps a
    # future edit from counting it as clean.
    assert list(inspect.signature(should_mark_clean_exit).parameters) == ["walked_to_completion", "hit_stop_condition"]


@pytest.mark.parametrize(
    ("consecutive_failures", "max_failures", "expected"),
    [
        (0, 5, False),
        (4, 5, False),
        (5, 5, True),
        (6, 5, True),
        (1, 1, True),
        (0, 1, False),
        (100, 0, False),
        (3, -1, False),
    ],
)
def test_should_abort_pass_after_n_consecutive_failures(consecutive_failures, max_failures, expected):
    assert should_abort_pass(consecutive_failures, max_failures) is expected
