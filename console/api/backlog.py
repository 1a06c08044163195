"""Backlog: active jobs in lease order and mangas missing covers, one page of each.

Counts stop at CATALOG_SEARCH_COUNT_CAP (`count_exact` says so); each list's
`next_after` is the cursor of its next page (`?after=` for the jobs,
`?covers_after=` for the covers) and `previous_before` that of the page
before (`?before=`, `?covers_before=`), each costing what page 1 does at any
depth. The two lists page independently: `page` numbers the jobs' page and
`covers_page` the covers', so a cursor deep into one list never drags the
other along. A number without its list's cursor is an offset walk, refused past
seek.MAX_OFFSET_ROWS rows with a 400 naming the cursor to follow.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.api import seek
from console.api import serializers as s
from console.api.base import AdminAPIView
from console.control import backlog


def _page(
    queryset: QuerySet, keys: Any, data: dict[str, Any], prefix: str, serializer: Any, cut: bool = False
) -> dict[str, Any]:
    """One list's page (sought from its `{prefix}after`/`{prefix}before` cursor) with a capped count and its cursors."""
    after, before, number = f"{prefix}after", f"{prefix}before", f"{prefix}page"
    try:
        window = seek.page(
            queryset,
            keys,
            number=data[number],
            size=data["page_size"],
            cursor=data.get(after),
            before_cursor=data.get(before),
            cursor_name=after,
        )
    except seek.BadCursor as exc:
        raise ValidationError({before if data.get(before) else after: str(exc)}) from exc
    except seek.DeepPage as exc:
        raise ValidationError({number: str(exc)}) from exc
    count, exact = seek.capped_count(queryset)
    rows = window.rows
    return {
        "count": count,
        "count_exact": exact and not cut,
        "next_after": seek.encode(rows[-1], keys) if window.has_next and rows else None,
        "previous_before": seek.encode(rows[0], keys) if window.has_previous and rows else None,
        "results": serializer(rows, many=True).data,
    }


class BacklogView(AdminAPIView):
    @extend_schema(
        operation_id="crawler_backlog",
        summary="Active jobs and mangas missing covers (same search, each list paged on its own)",
        parameters=[s.BacklogQuery],
        responses={200: s.BacklogSerializer},
    )
    def get(self, request: Request) -> Response:
        params = s.BacklogQuery(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        q = data.get("q")
        cut = bool(q) and backlog.search_is_cut(q)  # the jobs of some of the mangas named: count "more than"
        jobs = _page(backlog.active_jobs(q), backlog.LEASE_ORDER, data, "", s.JobRowSerializer, cut)
        covers = _page(backlog.missing_covers(q), backlog.RECENT_FIRST, data, "covers_", s.MissingCoverSerializer)
        return Response(
            {
                "page": data["page"],
                "covers_page": data["covers_page"],
                "page_size": data["page_size"],
                "active_jobs": jobs,
                "missing_covers": covers,
            }
        )
