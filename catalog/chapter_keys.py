"""A chapter's identity across sources: which chapters of two sites' copies of a series are the same chapter.

Two sites listing one series agree on what they print, not on their keys or
URLs: chapter 12 is `(chapter, None, 12)` on both, volume 2's first chapter
`(chapter, 2, 1)` on a site that numbers per volume (so "Vol.1 Ch.1" and
"Vol.2 Ch.1" stay two chapters), side story 19 `(extra, None, 19)`, never
chapter 19. Fractions are kept (12.5 is not 12) and `12.0` is `12`: a site
printing "Chapter 12.0" means chapter 12.

An extra printed without a number ("Special", "Epilogue") got its number
from its place in one site's list (catalog.chapter_numbers.number_extras),
so another site would give it a different one: such an extra is keyed by its
printed name instead, which both sites print alike. Its stored title is that
printed name, label included, so it is read again from the title: when the
title still names the extra's number ("Side Story 19: The Beach") the number
is the key, else the name is.
"""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from catalog.chapter_numbers import CHAPTER, EXTRA, classify


class ChapterKey(NamedTuple):
    """(kind, volume, number) for a numbered chapter; an unnumbered extra's `name` stands in for its number."""

    kind: str
    volume: int | None
    number: Decimal | None
    name: str = ""

    def label(self) -> str:
        """The key as people write it: "v2 c1", "c12.5", "extra 19", "extra special"."""
        volume = f"v{self.volume} " if self.volume is not None else ""
        if self.kind == CHAPTER:
            return f"{volume}c{self.number}"
        return f"{volume}extra {self.number if self.number is not None else self.name}"


def _plain(number: Decimal) -> Decimal:
    """12.00 -> 12, 12.50 -> 12.5: equal numbers give equal keys whatever their stored scale."""
    normal = number.normalize()
    # normalize() writes 10 as 1E+1; quantizing to a whole number gives back the plain digits.
    return normal.quantize(Decimal(1)) if normal == normal.to_integral_value() else normal


def chapter_key(kind: str, volume: int | None, number: Decimal, title: str) -> ChapterKey:
    """The identity of a stored chapter (its `kind`, `volume`, `number` and `title` fields) within its series."""
    if kind == EXTRA:
        printed = classify(title) if title else None
        if printed is None or printed.kind != EXTRA or printed.number is None or printed.number != number:
            return ChapterKey(EXTRA, volume, None, " ".join(title.split()).casefold())
    return ChapterKey(kind, volume, _plain(Decimal(number)))
