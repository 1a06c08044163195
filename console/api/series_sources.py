"""Which source served what in series with several sources, over the operator API (the dashboard's section)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from console.api.base import AdminAPIView
from console.status.series_sources import series_sources


class SeriesSourcesView(AdminAPIView):
    @extend_schema(
        operation_id="crawler_series_sources",
        summary="Per source: chapters served in series with several sources, failovers from and to it; the latest "
        "failovers",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        return Response(series_sources())
