"""A source's crawl settings over the API: `GET`/`PATCH /api/v1/admin/crawler/sources/<id>/` (operators, audited).

The same change the admin form, the admin actions, the Sources page and
`manage.py download_policy` make, through the same function
(`console.control.source_changes.change_source`): a `download` policy
switch queues or withdraws downloads, and one `change_source` audit row
names the door (`"via": "api"`). A body the settings contract refuses is a
400 naming the key; nothing changes.

Secret settings (a Suwayomi password, an Authorization header) are answered
as `"(hidden)"`; a PATCH that sends `"(hidden)"` back keeps the stored
value, a new value replaces it (`catalog.source_settings`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from catalog import source_settings
from catalog.models import Source
from console.api.base import ControlAPIView
from console.api.control import ERRORS, validated
from console.control.errors import ControlError
from console.control.source_changes import NotAnOperator, SourceMissing, change_source
from crawler import download_policy


class SourceSerializer(serializers.ModelSerializer):
    download = serializers.SerializerMethodField()

    class Meta:
        model = Source
        fields = ("id", "name", "kind", "base_url", "enabled", "settings", "download", "updated_at")

    def get_download(self, source: Source) -> str:
        return download_policy.policy_of(source)

    def to_representation(self, instance: Source) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["settings"] = source_settings.masked(data["settings"])
        return data


class SourceChangeInput(serializers.Serializer):
    """The fields to change; those left out keep their value. `download` sets the settings' `download` key."""

    name = serializers.CharField(max_length=200, required=False)
    base_url = serializers.URLField(max_length=500, required=False)
    enabled = serializers.BooleanField(required=False)
    settings = serializers.DictField(
        required=False,
        help_text='the whole settings object (replaces it; a secret sent back as "(hidden)" keeps its value)',
    )
    download = serializers.ChoiceField(choices=download_policy.POLICIES, required=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if not data:
            raise serializers.ValidationError("name at least one of: name, base_url, enabled, settings, download")
        return data


class SourceChangeResponse(serializers.Serializer):
    source = SourceSerializer()
    changed = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField()


class SourceView(ControlAPIView):
    def _source(self, source_id: str) -> Source | None:
        return Source.objects.filter(id=source_id).first()

    @extend_schema(
        operation_id="crawler_source",
        summary="A source's crawl settings",
        responses={200: SourceSerializer, 404: ERRORS[400], 401: ERRORS[401], 403: ERRORS[403]},
    )
    def get(self, request: Request, source_id: str) -> Response:
        source = self._source(source_id)
        if source is None:
            return Response({"detail": f"source {source_id!r} does not exist"}, status=status.HTTP_404_NOT_FOUND)
        return Response(SourceSerializer(source).data)

    @extend_schema(
        operation_id="crawler_source_change",
        summary="Change a source's name, base_url, enabled, settings or download policy (audited)",
        request=SourceChangeInput,
        responses={200: SourceChangeResponse, 404: ERRORS[400], **ERRORS},
    )
    def patch(self, request: Request, source_id: str) -> Response:
        data = dict(validated(SourceChangeInput, request))
        policy = data.pop("download", None)
        try:
            result = change_source(
                actor=request.user,
                source_id=source_id,
                changes=data,
                merge_settings={download_policy.KEY: policy} if policy else None,
                via="api",
            )
        except SourceMissing as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        except NotAnOperator as exc:  # lost the permission between the permission class and the row lock
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        except ControlError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = {"source": SourceSerializer(result.source).data, "changed": list(result.changed)}
        return Response({**body, "detail": result.describe()})
