"""Dead-letter and history lists: searchable, paginated, labelled in one query per page."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.generics import ListAPIView

from catalog.api.pagination import SeekPagination
from console.api import serializers as s
from console.api.base import StaffOnly
from console.control import backlog
from jobs.models import Job


class DeadJobsView(StaffOnly, ListAPIView):
    serializer_class = s.JobRowSerializer
    pagination_class = SeekPagination
    seek_keys = backlog.RECENT_FIRST
    query_serializer = s.JobListQuery

    def query(self) -> dict:
        params = self.query_serializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        q = params.validated_data.get("q")
        # Read by SeekPagination: a search cut at backlog.SEARCH_MANGAS mangas counts "more than".
        self.search_is_cut = bool(q) and backlog.search_is_cut(q)
        return params.validated_data

    def get_queryset(self) -> QuerySet[Job]:
        return backlog.dead_jobs(**self.query())

    @extend_schema(operation_id="crawler_dead_jobs", summary="Dead jobs, newest first", parameters=[s.JobListQuery])
    def get(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        return super().get(request, *args, **kwargs)


class HistoryView(DeadJobsView):
    query_serializer = s.HistoryQuery

    def get_queryset(self) -> QuerySet[Job]:
        return backlog.job_history(**self.query())

    @extend_schema(
        operation_id="crawler_history", summary="Job history, most recently changed first", parameters=[s.HistoryQuery]
    )
    def get(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        return super().get(request, *args, **kwargs)
