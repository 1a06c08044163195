"""How a Komga search ranks the series it found, best match first, when the client asks no other order.

A series is found by any of its copies' titles (queries.filtered_series), so
ranking cannot filter on the lead's title the way catalog.search.title_search
does. It orders instead, as title_search ranks substring matches: the series
whose lead's own title (else alternative titles) holds the words, shortest
matched title first (the exact title first), then those found through
another copy only; ties in the list's usual latest-chapter order. PostgreSQL compares the
normalised (case- and accent-free) columns catalog.search keeps; SQLite has
no such columns and keeps the latest-chapter order.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Case, Q, QuerySet, Value, When
from django.db.models.functions import Length

from catalog.models import LATEST_CHAPTER_ORDER, Manga
from catalog.search import SearchColumn, SearchNorm

# Past any title's length: the rank of a series found through another copy only.
ELSEWHERE = 100_000


def ranked_search(rows: QuerySet[Manga], q: str) -> QuerySet[Manga]:
    if connection.vendor != "postgresql":
        return rows.order_by(*LATEST_CHAPTER_ORDER)
    query = SearchNorm(Value(q))
    rows = rows.annotate(_title=SearchColumn("search_title"), _alt=SearchColumn("search_alt_titles"))
    rank = Case(
        When(Q(_title__contains=query), then=Length("_title")),
        When(Q(_alt__contains=query), then=Length("_alt")),
        default=Value(ELSEWHERE),
    )
    return rows.order_by(rank.asc(), *LATEST_CHAPTER_ORDER)
