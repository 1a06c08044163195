"""Page-number pagination shared by the library and admin APIs (`?page=`, `?page_size=` 1..100).

Strict on purpose: a `page_size` that is not a number in range is a 400
naming the rule, not a silent fallback to the default.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.paginator import EmptyPage, Page
from django.core.paginator import Paginator as DjangoPaginator
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

MAX_PAGE = 100_000  # far past any real list; a larger number would overflow the database's OFFSET


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 100

    def get_page_size(self, request: Any) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise ValidationError({self.page_size_query_param: f"Must be an integer from 1 to {self.max_page_size}."})
        return size


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


class SearchPagination(Pagination):
    """The manga list's pages: with a title search, the count is capped (CATALOG_SEARCH_COUNT_CAP)."""

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> list[Any] | None:
        self.django_paginator_class = CappedCountPaginator if request.query_params.get("q") else DjangoPaginator
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data: Any) -> Response:
        response = super().get_paginated_response(data)
        response.data["count_exact"] = getattr(self.page.paginator, "count_is_exact", True)
        return response

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paginated = super().get_paginated_response_schema(schema)
        paginated["properties"]["count_exact"] = {
            "type": "boolean",
            "description": "False when a title search matched more than CATALOG_SEARCH_COUNT_CAP mangas: "
            "`count` is then that lower bound, and `next` still leads to every page.",
        }
        return paginated
