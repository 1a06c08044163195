"""Backlog: active jobs in lease order and mangas missing covers, one page of each."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from crawler.api import serializers as s
from crawler.api.base import AdminAPIView
from crawler.control import backlog


def _page(queryset: QuerySet, page: int, page_size: int, serializer: Any) -> dict[str, Any]:
    start = (page - 1) * page_size
    return {"count": queryset.count(), "results": serializer(queryset[start : start + page_size], many=True).data}


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
        q, page, size = (
            params.validated_data.get("q"),
            params.validated_data["page"],
            params.validated_data["page_size"],
        )
        return Response(
            {
                "page": page,
                "page_size": size,
                "active_jobs": _page(backlog.active_jobs(q), page, size, s.JobRowSerializer),
                "missing_covers": _page(backlog.missing_covers(q), page, size, s.MissingCoverSerializer),
            }
        )
