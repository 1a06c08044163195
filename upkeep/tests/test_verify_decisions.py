"""The verify pass's decisions as truth tables: gaps, page verdicts, sampling, orphans, stale exports."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from upkeep.verify.decisions import (
    ChapterFacts,
    PageVerdict,
    chapter_gaps,
    export_stale,
    held_from_any_source,
    orphan_keys,
    page_verdict,
    sample_rate,
)

pytestmark = pytest.mark.sqlite_ok  # pure: no database at all


def ch(number, *, stored=True, listed=True, volume=None, kind="chapter") -> ChapterFacts:
    return ChapterFacts(uuid.uuid4(), kind, volume, Decimal(str(number)), listed=listed, stored=stored)


def numbers(gaps):
    return [(g.volume, str(g.number)) for g in gaps]


def test_a_listed_chapter_not_stored_between_stored_ones_is_a_gap():
    assert numbers(chapter_gaps([ch(11), ch(12, stored=False), ch(13)])) == [(None, "12")]


def test_a_number_the_source_never_listed_is_no_gap():
    # 11 and 13 stored, no row for 12: the source never listed it, nothing can fill it.
    assert chapter_gaps([ch(11), ch(13)]) == []


def test_a_chapter_the_source_dropped_is_no_gap_but_a_stored_dropped_one_still_bounds_the_range():
    assert chapter_gaps([ch(11), ch(12, stored=False, listed=False), ch(13)]) == []
    assert numbers(chapter_gaps([ch(1), ch(2, stored=False), ch(3, listed=False)])) == [(None, "2")]


def test_chapters_before_the_first_or_after_the_last_stored_are_no_gap():
    assert chapter_gaps([ch(1, stored=False), ch(2), ch(3), ch(4, stored=False)]) == []


def test_fewer_than_two_stored_chapters_leave_no_range():
    assert chapter_gaps([ch(1, stored=False), ch(2), ch(3, stored=False)]) == []


def test_gaps_are_volume_aware_numbers_restarting_per_volume():
    # Vol 1 ch 1-2, vol 2 ch 1-2 (numbering restarts): vol 2 ch 1 is missing, vol 1 ch 2 is not.
    chapters = [ch(1, volume=1), ch(2, volume=1), ch(1, volume=2, stored=False), ch(2, volume=2)]
    assert numbers(chapter_gaps(chapters)) == [(2, "1")]


def test_chapters_without_a_volume_come_after_every_volume():
    chapters = [ch(10, volume=1), ch(11, stored=False), ch(12), ch(3, volume=2, stored=False)]
    assert numbers(chapter_gaps(chapters)) == [(2, "3"), (None, "11")]


def test_extras_are_their_own_sequence():
    chapters = [ch(1), ch(3), ch(2, kind="extra", stored=False), ch(1, kind="extra"), ch(2, stored=True)]
    assert chapter_gaps(chapters) == []
    extras = [ch(1, kind="extra"), ch(2, kind="extra", stored=False), ch(3, kind="extra"), ch(2, stored=False)]
    assert [(g.kind, str(g.number)) for g in chapter_gaps(extras)] == [("extra", "2")]


def test_half_chapters_between_stored_ones_are_gaps_when_listed():
    assert numbers(chapter_gaps([ch(10), ch("10.5", stored=False), ch(11)])) == [(None, "10.5")]


def test_a_chapter_stored_from_another_source_is_no_gap_of_this_one():
    first = [ch(11), ch(12), ch(13)]
    second = [ch(11), ch(12, stored=False), ch(13), ch(14, stored=False)]
    held = held_from_any_source({"a": first, "b": second})
    assert chapter_gaps(held["b"]) == []
    assert [c.stored for c in held["b"]] == [True, True, True, False]
    alone = held_from_any_source({"b": second})
    assert numbers(chapter_gaps(alone["b"])) == [(None, "12")]


@pytest.mark.parametrize(
    ("exists", "actual", "verdict"),
    [
        (False, None, PageVerdict.MISSING),
        (True, None, PageVerdict.OK),
        (True, "AB" * 32, PageVerdict.OK),  # case does not matter
        (True, "cd" * 32, PageVerdict.CORRUPT),
    ],
)
def test_page_verdicts(exists, actual, verdict):
    assert page_verdict(exists=exists, expected_sha256="ab" * 32, actual_sha256=actual) is verdict


@pytest.mark.parametrize(
    ("sample", "total", "full", "rate"),
    [(200, 1000, False, 0.2), (200, 100, False, 1.0), (0, 100, False, 0.0), (5, 0, False, 0.0), (0, 0, True, 1.0)],
)
def test_sample_rate(sample, total, full, rate):
    assert sample_rate(sample, total, full=full) == rate


def test_an_orphan_is_an_unnamed_file_older_than_the_grace():
    listed = [("pages/a/1.png", 0.0), ("pages/a/2.png", 0.0), ("pages/a/.incoming-x.part", 990.0)]
    assert orphan_keys(listed, {"pages/a/1.png"}, now=1000.0, grace_secs=60) == ["pages/a/2.png"]
    assert orphan_keys(listed, set(), now=2000.0, grace_secs=60) == [k for k, _ in listed]


@pytest.mark.parametrize(
    ("mtime", "stamp", "stale"),
    [(None, 100, True), (99.9, 100, True), (100.5, 100, False), (200.0, 100, False)],
)
def test_an_export_is_stale_when_gone_or_older_than_its_chapter(mtime, stamp, stale):
    assert export_stale(file_mtime=mtime, chapter_stamp=stamp) is stale
