"""catalog.series_chapters: a series' chapter list across sources, one entry per (kind, volume, number)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from catalog.series_chapters import union_chapters

pytestmark = pytest.mark.sqlite_ok


@dataclass(frozen=True)
class Row:
    source_id: str
    kind: str
    volume: int | None
    number: Decimal
    title: str = ""
    done: bool = True


def ch(source, number, volume=None, kind="chapter", title="", done=True):
    return Row(source, kind, volume, Decimal(number), title, done)


def _table(entries):
    return [(e.key.label(), e.shown.source_id, [a.source_id for a in e.alternates]) for e in entries]


def test_each_key_once_from_the_preferred_source_with_the_others_as_alternates():
    rows = [ch("alpha", "1"), ch("alpha", "2"), ch("beta", "2.00"), ch("beta", "3"), ch("beta", "2.5")]
    assert _table(union_chapters(rows, ["beta", "alpha"])) == [
        ("c1", "alpha", []),
        ("c2", "beta", ["alpha"]),
        ("c2.5", "beta", []),
        ("c3", "beta", []),
    ]


def test_a_readable_copy_is_shown_before_a_preferred_one_not_yet_downloaded():
    rows = [ch("alpha", "1", done=False), ch("beta", "1")]
    entries = union_chapters(rows, ["alpha", "beta"], readable=lambda r: r.done)
    assert _table(entries) == [("c1", "beta", ["alpha"])]


def test_volume_restart_and_extras_stay_distinct_in_reading_order():
    rows = [
        ch("alpha", "1", volume=2),
        ch("alpha", "1", volume=1),
        ch("alpha", "2", volume=1),
        ch("beta", "1", volume=2),
        ch("beta", "1", kind="extra", title="Side Story 1"),
        ch("beta", "2.01", kind="extra", title="Special"),
        ch("alpha", "0.01", kind="extra", title="Special"),
        ch("beta", "3"),
    ]
    assert _table(union_chapters(rows, ["alpha", "beta"])) == [
        ("v1 c1", "alpha", []),
        ("v1 c2", "alpha", []),
        ("v2 c1", "alpha", ["beta"]),
        ("c3", "beta", []),
        ("extra 1", "beta", []),
        ("extra special", "alpha", ["beta"]),
    ]


def test_sources_outside_the_order_come_last():
    assert _table(union_chapters([ch("zeta", "1"), ch("alpha", "1")], ["alpha"])) == [("c1", "alpha", ["zeta"])]
