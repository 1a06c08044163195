"""Django paginators for big tables, shared by the library API (`catalog.api.pagination`) and the admin.

Django alone, no REST framework: the admin's modules are imported by every
process that sets Django up (a crawl worker too), the API's only by the web
process.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.paginator import EmptyPage, Page
from django.core.paginator import Paginator as DjangoPaginator

MAX_PAGE = 100_000  # far past any real list; a larger number would overflow the database's OFFSET


class CappedCountPaginator(DjangoPaginator):
    """Counts rows no further than `cap`: past it the count is a lower bound, and a page exists if it has rows.

    An exact count of a common word's matches reads every match (tens of
    milliseconds at 100k mangas), while the page itself is an index walk
    that stops after it (catalog/search.py).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cap = settings.CATALOG_SEARCH_COUNT_CAP

    @cached_property
    def _counted(self) -> int:
        rows = self.object_list.order_by().values("pk")
        return rows[: self.cap + 1].count() if self.cap else rows.count()

    @cached_property
    def count_is_exact(self) -> bool:
        return not self.cap or self._counted <= self.cap

    @cached_property
    def count(self) -> int:
        return self._counted if self.count_is_exact else self.cap

    def validate_number(self, number: Any) -> int:
        try:
            return super().validate_number(number)
        except EmptyPage:
            if int(number) > MAX_PAGE:
                raise
            if self.count_is_exact or int(number) < 1:
                raise
            return int(number)  # beyond the counted pages: `page` tells whether it exists

    def page(self, number: Any) -> Page:
        if self.count_is_exact:
            return super().page(number)
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page + 1])
        if not rows:
            raise EmptyPage(self.error_messages["no_results"])
        return OpenEndedPage(rows[: self.per_page], number, self, has_more=len(rows) > self.per_page)


class OpenEndedPage(Page):
    def __init__(self, object_list: list[Any], number: int, paginator: DjangoPaginator, *, has_more: bool) -> None:
        super().__init__(object_list, number, paginator)
        self.has_more = has_more

    def has_next(self) -> bool:
        return self.has_more


class PageRowsPaginator(DjangoPaginator):
    """Pages whose annotations are computed for the page's rows only, however deep the page.

    PostgreSQL computes a row's whole SELECT list before OFFSET skips it, so a
    correlated subquery (the manga list's chapter count) ran for every skipped
    row: 90,000 times on page 1,800 of a 100k-manga library. Here the offset
    walk picks the page's keys alone (`values("pk")`, no annotation) and the
    annotated rows are read for those keys: still one query.
    """

    def page(self, number: Any) -> Page:
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = bottom + self.per_page
        if top + self.orphans >= self.count:
            top = self.count
        keys = self.object_list.values("pk")[bottom:top]
        return self._get_page(self.object_list.filter(pk__in=keys), number, self)
