"""Page-number pagination shared by the library and admin APIs (`?page=`, `?page_size=` 1..100).

Strict on purpose: a `page_size` that is not a number in range is a 400
naming the rule, not a silent fallback to the default.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from catalog.api import seek
from catalog.inputs import BadInteger, parse_bounded_int
from listing.paginators import MAX_PAGE, CappedCountPaginator, PageRowsPaginator


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 100

    def get_page_size(self, request: Any) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            return parse_bounded_int(raw, low=1, high=self.max_page_size)
        except BadInteger as exc:
            message = f"Must be an integer from 1 to {self.max_page_size}."
            raise ValidationError({self.page_size_query_param: message}) from exc

    def get_page_number(self, request: Any, paginator: Any) -> int | str:
        """`?page=`: ASCII digits up to MAX_PAGE (or "last"); Django's own check would take "٣" and "1_0"."""
        raw = request.query_params.get(self.page_query_param) or "1"
        if raw in self.last_page_strings:
            return raw
        return _page_number(raw)


class SearchPagination(Pagination):
    """The manga list's pages: with a title search, the count is capped (CATALOG_SEARCH_COUNT_CAP)."""

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> list[Any] | None:
        self.django_paginator_class = CappedCountPaginator if request.query_params.get("q") else PageRowsPaginator
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


class SeekPagination(Pagination):
    """Capped counts and cursor ("seek") links, for the operator's long lists (dead jobs, job history).

    `next` carries the last row's keys in `after` and `previous` the first
    row's in `before`, so paging through a million rows either way costs
    what page 1 does; `page` beside a cursor only numbers the page. A page
    by number alone is an offset walk, served for the first
    seek.MAX_OFFSET_ROWS rows and a 400 naming `after` past them. The view
    names its order in `seek_keys`. `count` stops at CATALOG_SEARCH_COUNT_CAP
    (`count_exact` false past it), so a list of three million jobs is never
    counted whole.
    """

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> list[Any] | None:
        self.request = request
        self.keys = view.seek_keys
        self.size = self.get_page_size(request)
        self.number = _page_number(request.query_params.get(self.page_query_param, "1"))
        params = request.query_params
        try:
            self.window = seek.page(
                queryset,
                self.keys,
                number=self.number,
                size=self.size,
                cursor=params.get("after"),
                before_cursor=params.get("before"),
            )
        except seek.BadCursor as exc:
            raise ValidationError({"before" if "before" in params else "after": str(exc)}) from exc
        except seek.DeepPage as exc:
            raise ValidationError({self.page_query_param: str(exc)}) from exc
        if not self.window.rows and self.number > 1:
            raise NotFound("Invalid page.")
        self.count, self.count_exact = seek.capped_count(queryset)
        if getattr(view, "search_is_cut", False):  # the list holds some of the matches only: "more than"
            self.count_exact = False
        return self.window.rows

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {
                "count": self.count,
                "count_exact": self.count_exact,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_next_link(self) -> str | None:
        if not self.window.has_next or not self.window.rows:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), "before")
        url = replace_query_param(url, self.page_query_param, self.number + 1)
        return replace_query_param(url, "after", seek.encode(self.window.rows[-1], self.keys))

    def get_previous_link(self) -> str | None:
        if not self.window.has_previous or not self.window.rows:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), "after")
        if self.number <= 2:
            return replace_query_param(remove_query_param(url, "before"), self.page_query_param, 1)
        url = replace_query_param(url, self.page_query_param, self.number - 1)
        return replace_query_param(url, "before", seek.encode(self.window.rows[0], self.keys))

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paginated = super().get_paginated_response_schema(schema)
        paginated["properties"]["count_exact"] = {
            "type": "boolean",
            "description": "False when the list holds more than CATALOG_SEARCH_COUNT_CAP rows: `count` is that "
            "lower bound. `next` carries a cursor (`after`) and `previous` one (`before`) that make any depth "
            "as cheap as the first page.",
        }
        return paginated

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        cursor = {"type": "string"}
        return [
            *super().get_schema_operation_parameters(view),
            {
                "name": "after",
                "required": False,
                "in": "query",
                "description": "Rows after this cursor (from a `next` link). A `page` number without a cursor "
                f"reaches the first {seek.MAX_OFFSET_ROWS:,} rows only (400 past them).",
                "schema": cursor,
            },
            {
                "name": "before",
                "required": False,
                "in": "query",
                "description": "Rows before this cursor (from a `previous` link).",
                "schema": cursor,
            },
        ]


def _page_number(raw: str) -> int:
    try:
        return parse_bounded_int(raw, low=1, high=MAX_PAGE)
    except BadInteger as exc:
        raise NotFound("Invalid page.") from exc
