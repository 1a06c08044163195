"""The admin API's force-analyze route under /api/v1/admin/crawler/: the operator's door to `console.control.analysis`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.models import Page
from console.api.base import ControlAPIView
from console.api.control import ERRORS, control_error, validated
from console.control import analysis as control
from console.control.errors import ControlError


class ForceAnalyzeInput(serializers.Serializer):
    page = serializers.PrimaryKeyRelatedField(
        queryset=Page.objects.all(),
        pk_field=serializers.UUIDField(),
        error_messages={"does_not_exist": "No page with id {pk_value}."},
    )


class ForceAnalyzeResponseSerializer(serializers.Serializer):
    page = serializers.UUIDField()
    outcome = serializers.CharField()


class ForceAnalyzeView(ControlAPIView):
    @extend_schema(
        operation_id="crawler_force_analyze",
        summary="Force re-analysis of a page",
        request=ForceAnalyzeInput,
        responses={202: ForceAnalyzeResponseSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        page = validated(ForceAnalyzeInput, request)["page"]
        try:
            outcome = control.force_analyze(actor=request.user, page=page)
        except ControlError as exc:
            return control_error(exc)
        return Response({"page": page.id, "outcome": outcome.value}, status=202)
