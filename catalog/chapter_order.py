"""A manga's reading order, one definition for every reader: main chapters, then extras.

Main chapters go by volume (chapters printed without a volume after those
with one: the newest chapters are not yet collected in a volume), then
number; extras follow the whole main story, ordered the same way among
themselves, so "Side Story 1" never sits beside chapter 1. Arrival, then id,
break ties so equal keys never swap between pages. The kind sorts by its
stored value: "chapter" < "extra".
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any, Protocol

from django.db.models import F, IntegerField, OrderBy, Q, Value
from django.db.models.functions import Coalesce

READING_ORDER: tuple[OrderBy, ...] = (
    F("kind").asc(),
    F("volume").asc(nulls_last=True),
    F("number").asc(),
    F("created_at").asc(),
    F("id").asc(),
)


# READING_ORDER as cursor keys (catalog.api.seek): a cursor holds no NULL, so a chapter printed without a
# volume sorts under VOLUME_ORDER's stand-in, after every real volume, as `nulls_last` puts it.
NO_VOLUME = 2**31 - 1
VOLUME_ORDER = Coalesce("volume", Value(NO_VOLUME), output_field=IntegerField())
CURSOR_KEYS: tuple[tuple[str, bool], ...] = (
    ("kind", False),
    ("volume_order", False),
    ("number", False),
    ("created_at", False),
    ("id", False),
)
CURSOR_FIELDS = {"volume_order": IntegerField()}


class Ordered(Protocol):
    kind: str
    volume: int | None
    number: Decimal
    created_at: dt.datetime
    id: uuid.UUID


def reading_key(chapter: Ordered | Any) -> tuple[Any, ...]:
    """READING_ORDER as a Python sort key, for lists already in memory."""
    return (
        chapter.kind,
        chapter.volume is None,
        chapter.volume or 0,
        chapter.number,
        chapter.created_at,
        chapter.id,
    )


def before(chapter: Ordered | Any) -> Q:
    """The chapters of a manga that come before `chapter` in READING_ORDER (filter it by manga)."""
    if chapter.volume is None:
        earlier_volume, same_volume = Q(volume__isnull=False), Q(volume__isnull=True)
    else:
        earlier_volume, same_volume = Q(volume__lt=chapter.volume), Q(volume=chapter.volume)
    within_volume = (
        Q(number__lt=chapter.number)
        | Q(number=chapter.number, created_at__lt=chapter.created_at)
        | Q(number=chapter.number, created_at=chapter.created_at, id__lt=chapter.id)
    )
    return Q(kind__lt=chapter.kind) | (Q(kind=chapter.kind) & (earlier_volume | (same_volume & within_volume)))
