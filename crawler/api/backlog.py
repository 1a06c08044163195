"""Backlog: active jobs in lease order and mangas missing covers, one page of each.

Counts stop at CATALOG_SEARCH_COUNT_CAP (`count_exact` says so); each list's
`next_after` is the cursor of its next page (`?after=` for the jobs,
`?covers_after=` for the covers), which costs what page 1 does at any depth.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.api import seek
from crawler.api import serializers as s
from crawler.api.base import AdminAPIView
from crawler.control import backlog


def _page(
    queryset: QuerySet, keys: Any, page: int, page_size: int, cursor: str | None, serializer: Any
) -> dict[str, Any]:
    """One page (sought from `cursor` when given) with a capped count and the cursor of the page after it."""
    rows, has_next = seek.page(queryset, keys, number=page, size=page_size, cursor=cursor)
    count, exact = seek.capped_count(queryset)
    return {
        "count": count,
        "count_exact": exact,
        "next_after": seek.encode(rows[-1], keys) if has_next else None,
        "results": serializer(rows, many=True).data,
    }


class BacklogView(AdminAPIView):
    @extend_schema(
        operation_id="crawler_backlog",
        summary="Active jobs and mangas missing covers (same page and search for both)",
        parameters=[s.BacklogQuery],
        responses={200: s.BacklogSerializer},
    )
    def get(self, request: Request) -> Response:
        params = s.BacklogQuery(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        q, page, size = data.get("q"), data["page"], data["page_size"]
        try:
            jobs = _page(backlog.active_jobs(q), backlog.LEASE_ORDER, page, size, data.get("after"), s.JobRowSerializer)
            covers = _page(
                backlog.missing_covers(q),
                backlog.RECENT_FIRST,
                page,
                size,
                data.get("covers_after"),
                s.MissingCoverSerializer,
            )
        except seek.BadCursor as exc:
            raise ValidationError({"after": str(exc)}) from exc
        return Response({"page": page, "page_size": size, "active_jobs": jobs, "missing_covers": covers})
