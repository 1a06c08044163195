"""Paging of lists and chapter lists as the settings describe it: page numbers, offsets, start indexes, totals.

Pure functions: the adapter asks them which placeholders a request fills
and whether a stated total says more follows.
"""

from __future__ import annotations

from dataclasses import dataclass

# A chapter list that takes several requests stops here whatever the site says (a loop guard, not a limit
# any real list reaches: 200 requests of 150 chapters).
MAX_CHAPTER_LIST_REQUESTS = 200


@dataclass(frozen=True)
class Endpoint:
    """A chapter list request as the settings describe it: the key naming it, its template, method and body."""

    key: str
    template: str
    method: str
    body: tuple[tuple[str, str], ...]


def paging_values(page: int, size: int | None) -> dict[str, int]:
    """The paging placeholders of list (and chapter list) page `page`, numbered from 1."""
    offset = (page - 1) * (size or 0)
    return {"page": page, "page_index": page - 1, "offset": offset, "start_index": offset + 1}


def more_after(page: int, size: int | None, total: int | None, found: int) -> bool | None:
    """Whether a stated total says more items follow page `page` (None: the answer states no total)."""
    if total is None or not size:
        return None
    return found > 0 and page * size < total
