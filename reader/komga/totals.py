"""How many series a Komga list holds, without counting every match of a filter over a whole library.

Every Komga page carries `totalElements`. The plain list (every series) is
one count of the leads' index, cheap at any size. A filtered list (a search,
a library, a read state) costs a test per series to count: a common word, a
mirror source that holds every series or "unread" match most of a 100k
library, and counting them all took hundreds of milliseconds while the page
itself is an index walk that stops after it. Such a list is counted up to
CATALOG_SEARCH_COUNT_CAP (listing.paginators.CappedCountPaginator, as the
library API's search does); past it the total is a lower bound that still
says truly whether another page follows, which is what clients page on
(Mihon reads `last`).

PostgreSQL compiles a query with JIT when the planner's cost passes
`jit_above_cost`; a capped count of the read-state tests costs that much
on paper and spent more compiling (30 ms of 36 at 100k; 270 ms of 285
uncapped) than running. It is counted with JIT (and parallel workers) off
for its own transaction (`SET LOCAL`, through `set_config`), which holds behind PgBouncer's transaction pooling too, where
a connection option or a session `SET` would not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from listing.paginators import CappedCountPaginator
from reader.komga.params import Paging, SeriesFilter

# For the capped count's transaction alone (as SET LOCAL): no JIT, and no parallel workers, whose start costs
# more than the thousand index probes the count makes (a mirror's library: 37 ms with two workers, 21 without).
LEAN_COUNT = "SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)"


def is_plain(wanted: SeriesFilter) -> bool:
    """Whether `wanted` lists every series (an order, or `deleted=false`, filters nothing): then the count is exact."""
    return replace(wanted, sort=[], deleted=None if wanted.deleted is False else wanted.deleted) == SeriesFilter()


def page_total(*, counted: int, exact: bool, offset: int, shown: int, more: bool) -> int:
    """`totalElements` of a page (pure): the count when exact, else a lower bound true to whether a page follows.

    `shown` rows were read from `offset`, and `more` says a row follows them.
    """
    if exact or (not more and shown):
        return counted if exact else offset + shown
    return max(counted + 1, offset + shown + (1 if more else 0))


def ids_and_total(rows: QuerySet[Any], paging: Paging, *, plain: bool) -> tuple[list[Any], int]:
    """One page of `rows` (their pks, in order) and the list's `totalElements`: at most two queries.

    A page that ends the list says its total itself, with no count.
    """
    if paging.unpaged:
        ids = list(rows)
        return ids, len(ids)
    read = list(rows[paging.offset : paging.offset + paging.size + 1])
    ids, more = read[: paging.size], len(read) > paging.size
    if not more and (ids or paging.offset == 0):
        return ids, paging.offset + len(ids)
    if plain:
        return ids, rows.count()
    counter = CappedCountPaginator(rows, paging.size)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(LEAN_COUNT)
        counted, exact = counter.count, counter.count_is_exact
    return ids, page_total(counted=counted, exact=exact, offset=paging.offset, shown=len(ids), more=more)
