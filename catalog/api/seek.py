"""Keyset ("seek") paging for long lists: a page starts after the keys of the previous page's last row.

An OFFSET page walks and throws away every row before it, so page 18,000 of
a million queued jobs read 900,000 index entries. A cursor carries the sort
keys of the last row shown; the next page is an index range scan from there,
as cheap at any depth as the first page. The OPDS feeds seek by title the
same way (reader.library.TitleCursor).

`keys` name the ordering, most significant first, each with its direction,
and end in a unique field (the primary key) so no two rows tie.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Model, Q, QuerySet

Key = tuple[str, bool]  # (field name, descending)


class BadCursor(ValueError):
    """A cursor this server did not write (or for another list)."""


def order_of(keys: Sequence[Key]) -> list[str]:
    return [f"-{name}" if descending else name for name, descending in keys]


def encode(row: Model, keys: Sequence[Key]) -> str:
    """The cursor of `row`: its sort keys, JSON in URL-safe base64."""
    values = [getattr(row, name) for name, _ in keys]
    raw = json.dumps([None if v is None else v.isoformat() if hasattr(v, "isoformat") else str(v) for v in values])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(token: str, model: type[Model], keys: Sequence[Key]) -> list[Any]:
    """The sort keys `encode` wrote, as the fields' Python values; BadCursor for anything else."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(raw, list) or len(raw) != len(keys) or any(v is None for v in raw):
            raise ValueError(raw)
        return [model._meta.get_field(name).to_python(value) for (name, _), value in zip(keys, raw, strict=True)]
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


def capped_count(queryset: QuerySet[Any], cap: int | None = None) -> tuple[int, bool]:
    """(rows, exact): rows counted up to `cap` (CATALOG_SEARCH_COUNT_CAP): past it a lower bound, and exact False."""
    cap = settings.CATALOG_SEARCH_COUNT_CAP if cap is None else cap
    rows = queryset.order_by().values("pk")
    if not cap:
        return rows.count(), True
    counted = rows[: cap + 1].count()
    return (counted, True) if counted <= cap else (cap, False)


def page(
    queryset: QuerySet[Any], keys: Sequence[Key], *, number: int, size: int, cursor: str | None
) -> tuple[list[Any], bool]:
    """(rows, has_next) of page `number`: sought from `cursor` when given, else by offset. `queryset` is ordered by `keys`."""
    if cursor is not None:
        sought = queryset.filter(after(keys, decode(cursor, queryset.model, keys)))
        rows = list(sought[: size + 1])
    else:
        bottom = (number - 1) * size
        rows = list(queryset[bottom : bottom + size + 1])
    return rows[:size], len(rows) > size
