"""How a Komga search ranks the series it found, best match first, when the client asks no other order.

A series is found by any of its copies' titles (queries.filtered_series), so
ranking cannot filter on the lead's title the way catalog.search.title_search
does. It orders instead, as title_search ranks substring matches: the series
whose lead's own title (else alternative titles) holds the words, shortest
matched title first (the exact title first), then those found through
another copy only; ties in the list's usual latest-chapter order. PostgreSQL compares the
normalised (case- and accent-free) columns catalog.search keeps; SQLite has
no such columns and keeps the latest-chapter order.

A common word's page is cut as catalog.search cuts one (`SeriesRanked`):
ranking every series a fifth of a 100k library matches sorted every lead.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Case, Q, QuerySet, Value, When
from django.db.models.functions import Length, NullIf

from catalog.models import LATEST_CHAPTER_ORDER, Manga
from catalog.search import SearchColumn, SearchNorm, SubstringRanked, cut_threshold, library_size

# Past any title's length: the rank of a series found through another copy only.
ELSEWHERE = 100_000


class SeriesRanked(SubstringRanked):
    """Ranked series whose slices read only the leads that can reach them, when enough leads match by their own titles.

    Every lead matched by its own title or alternative titles ranks before
    any series found through another copy only, so once `stop` of them
    match, rows [:stop] are among the `stop` shortest title matches and the
    `stop` shortest alternative-title-only matches: two index walks
    (catalog.search's length indexes) that stop after them. With fewer own
    matches the series found through copies count, and every match is ranked.
    """

    _own: QuerySet[Manga] | None = None

    def _clone(self) -> SeriesRanked:
        clone = super()._clone()
        clone._own = self._own  # type: ignore[attr-defined]
        return clone  # type: ignore[return-value]

    def __getitem__(self, k: Any) -> Any:
        if not isinstance(k, slice) or k.stop is None or self._walks is None or self._result_cache is not None:
            return super().__getitem__(k)
        enough = max(cut_threshold(k.stop, library_size()), k.stop)  # rows [:stop] need `stop` own matches
        if self._own is None or self._own.order_by().values("pk")[:enough].count() < enough:
            return self._uncut(self._chain())[k]
        titles, alternatives = self._walks
        return self.filter(pk__in=titles[: k.stop].union(alternatives[: k.stop], all=True))[k]


def ranked_search(rows: QuerySet[Manga], q: str) -> QuerySet[Manga]:
    if connection.vendor != "postgresql":
        return rows.order_by(*LATEST_CHAPTER_ORDER)
    query = SearchNorm(Value(q))
    rows = rows.annotate(_title=SearchColumn("search_title"), _alt=SearchColumn("search_alt_titles"))
    in_title, in_alt = Q(_title__contains=query), Q(_alt__contains=query)
    rank = Case(
        When(in_title, then=Length("_title")),
        When(in_alt, then=Length("_alt")),
        default=Value(ELSEWHERE),
    )
    walks = (
        rows.filter(in_title).order_by(Length("_title"), *LATEST_CHAPTER_ORDER).values("pk"),
        rows.filter(in_alt & ~in_title).order_by(NullIf(Length("_alt"), Value(0)), *LATEST_CHAPTER_ORDER).values("pk"),
    )
    ranked = SeriesRanked.cut(rows.order_by(rank.asc(), *LATEST_CHAPTER_ORDER), walks)
    ranked._own = rows.filter(in_title | in_alt)  # type: ignore[attr-defined]
    return ranked
