"""Keyset ("seek") paging for long lists: a page starts after the keys of the previous page's last row.

An OFFSET page walks and throws away every row before it, so page 18,000 of
a million queued jobs read 900,000 index entries. A cursor carries the sort
keys of the last row shown; the next page is an index range scan from there,
as cheap at any depth as the first page. The OPDS feeds seek by title the
same way (reader.library.TitleCursor).

`keys` name the ordering, most significant first, each with its direction,
and end in a unique field (the primary key) so no two rows tie. A page asked
by number alone is an OFFSET walk, allowed for the first MAX_OFFSET_ROWS rows
only (DeepPage past them): deeper pages go by cursor, `after` the last row of
the page before or `before` the first row of the page after.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Field, Model, Q, QuerySet

from catalog import inputs

Key = tuple[str, bool]  # (field name, descending)

# A page by number walks and drops every row before it: past this many rows it is refused (go by cursor).
MAX_OFFSET_ROWS = 2_000


class BadCursor(ValueError):
    """A cursor this server did not write (or for another list)."""


class DeepPage(ValueError):
    """A page number past MAX_OFFSET_ROWS rows with no cursor: the message says which cursor to follow."""


@dataclass(frozen=True)
class Window:
    """One page's rows, and whether there are rows after and before it."""

    rows: list[Any]
    has_next: bool
    has_previous: bool


def order_of(keys: Sequence[Key]) -> list[str]:
    return [f"-{name}" if descending else name for name, descending in keys]


def encode(row: Model, keys: Sequence[Key]) -> str:
    """The cursor of `row`: its sort keys, JSON in URL-safe base64."""
    values = [getattr(row, name) for name, _ in keys]
    raw = json.dumps([None if v is None else v.isoformat() if hasattr(v, "isoformat") else str(v) for v in values])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(
    token: str, model: type[Model], keys: Sequence[Key], annotated: Mapping[str, Field[Any, Any]] | None = None
) -> list[Any]:
    """The sort keys `encode` wrote, as the fields' Python values; BadCursor for anything else.

    `annotated`: the field of each key that is an annotation of the queryset rather than a model field.
    """
    try:
        raw = inputs.loads_bounded(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(raw, list) or len(raw) != len(keys) or any(v is None for v in raw):
            raise ValueError(raw)
        fields = [(annotated or {}).get(name) or model._meta.get_field(name) for name, _ in keys]
        return [field.to_python(value) for field, value in zip(fields, raw, strict=True)]
    except (binascii.Error, ValueError, TypeError, AttributeError, ValidationError) as exc:
        raise BadCursor("the cursor is not one this server wrote; follow the list's own next link") from exc


def after(keys: Sequence[Key], values: Sequence[Any]) -> Q:
    """Rows strictly after `values` in the `keys` order: (a > x) or (a = x and b > y) or …

    The leading key's own bound (a >= x) comes first so the index scan starts at
    the cursor instead of filtering from the start of the index.
    """
    (first, first_desc), first_value = keys[0], values[0]
    bound = Q(**{f"{first}__{'lte' if first_desc else 'gte'}": first_value})
    later = Q()
    for i, ((name, descending), value) in enumerate(zip(keys, values, strict=True)):
        equal = {keys[j][0]: values[j] for j in range(i)}
        later |= Q(**equal, **{f"{name}__{'lt' if descending else 'gt'}": value})
    return bound & later


def before(keys: Sequence[Key], values: Sequence[Any]) -> Q:
    """Rows strictly before `values` in the `keys` order: `after` in the reversed order."""
    return after(reversed_keys(keys), values)


def reversed_keys(keys: Sequence[Key]) -> list[Key]:
    return [(name, not descending) for name, descending in keys]


def capped_count(queryset: QuerySet[Any], cap: int | None = None) -> tuple[int, bool]:
    """(rows, exact): rows counted up to `cap` (CATALOG_SEARCH_COUNT_CAP): past it a lower bound, and exact False."""
    cap = settings.CATALOG_SEARCH_COUNT_CAP if cap is None else cap
    rows = queryset.order_by().values("pk")
    if not cap:
        return rows.count(), True
    counted = rows[: cap + 1].count()
    return (counted, True) if counted <= cap else (cap, False)


def page(
    queryset: QuerySet[Any],
    keys: Sequence[Key],
    *,
    number: int,
    size: int,
    cursor: str | None = None,
    before_cursor: str | None = None,
    cursor_name: str = "after",
) -> Window:
    """Page `number` of `queryset` (ordered by `keys`): sought `after` `cursor` or before `before_cursor` when given.

    Without a cursor the page is an OFFSET walk, refused with DeepPage past
    MAX_OFFSET_ROWS rows (its message names `cursor_name`, the parameter to
    follow instead); a page past the end is simply empty.
    """
    model = queryset.model
    if cursor is not None and before_cursor is not None:
        raise BadCursor("give one cursor: `after` pages forward, `before` pages back")
    if cursor is not None:
        rows = list(queryset.filter(after(keys, decode(cursor, model, keys)))[: size + 1])
        return Window(rows[:size], has_next=len(rows) > size, has_previous=True)
    if before_cursor is not None:
        backward = queryset.filter(before(keys, decode(before_cursor, model, keys))).order_by(
            *order_of(reversed_keys(keys))
        )
        rows = list(backward[: size + 1])
        return Window(rows[:size][::-1], has_next=True, has_previous=len(rows) > size)
    bottom = (number - 1) * size
    if bottom > MAX_OFFSET_ROWS:
        raise DeepPage(
            f"page {number} of {size} rows would skip {bottom:,} rows; a page number reaches the first "
            f"{MAX_OFFSET_ROWS:,} rows only: follow the list's next link (its `{cursor_name}` cursor) to go deeper"
        )
    rows = list(queryset[bottom : bottom + size + 1])
    return Window(rows[:size], has_next=len(rows) > size, has_previous=number > 1)
