"""One-shot crawler status: the same compose function the SSE stream pushes."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from console.api.base import AdminAPIView
from console.status.compose import compose_status


class StatusView(AdminAPIView):
    @extend_schema(
        operation_id="crawler_status",
        summary="Composed crawler status (workers, phases, queue counts, flags, last pass)",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        return Response(compose_status())
