"""Series in the library API: merging, splitting, undoing and reviewing suggestions, for holders of merge_series.

Every write calls catalog.series, like the admin and `manage.py series`; a
refused change is a 409 naming what to fix and changes nothing. Writes need
the `catalog.merge_series` permission (the Operators group) and a way in
that may operate: a read-scoped API key never merges, whoever holds it.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView, get_object_or_404
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import api_keys, policy
from accounts.drf import API_AUTHENTICATION
from catalog import series as service
from catalog.api.inputs import BoundedJSONParser
from catalog.api.pagination import Pagination
from catalog.models import Manga, Series, SeriesChange, SeriesSuggestion

MERGE_PERMISSION = "catalog.merge_series"


class CanMergeSeries(BasePermission):
    message = (
        f"Merging and splitting series needs the {MERGE_PERMISSION} permission and a session, token or operate key."
    )

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return policy.is_active_user(user) and user.has_perm(MERGE_PERMISSION) and api_keys.may_operate_with(user)


class SeriesWrites:
    authentication_classes = API_AUTHENTICATION
    permission_classes = (CanMergeSeries,)
    parser_classes = (BoundedJSONParser,)


class ChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.get_username", default=None)
    undoes = serializers.UUIDField(source="undoes_id", allow_null=True)

    class Meta:
        model = SeriesChange
        fields = ("id", "action", "via", "actor", "reason", "moves", "undoes", "created_at")


class SuggestionSerializer(serializers.ModelSerializer):
    first_title = serializers.CharField(source="first.title")
    second_title = serializers.CharField(source="second.title")

    class Meta:
        model = SeriesSuggestion
        fields = ("id", "first", "first_title", "second", "second_title", "evidence", "state", "created_at")


class MergeInput(serializers.Serializer):
    target = serializers.UUIDField()
    others = serializers.ListField(child=serializers.UUIDField(), min_length=1, max_length=100)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class SplitInput(serializers.Serializer):
    mangas = serializers.ListField(child=serializers.UUIDField(), min_length=1, max_length=100)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class ReasonInput(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class SourceOrderInput(serializers.Serializer):
    sources = serializers.ListField(child=serializers.SlugField(max_length=64), max_length=50)


class SourceOrderOutput(serializers.Serializer):
    id = serializers.UUIDField()
    source_order = serializers.ListField(child=serializers.CharField())


class AlternatesInput(serializers.Serializer):
    download_alternates = serializers.BooleanField()


class AlternatesOutput(serializers.Serializer):
    id = serializers.UUIDField()
    download_alternates = serializers.BooleanField()


def _all_found(model: Any, ids: list[Any], field: str) -> list[Any]:
    rows = {row.pk: row for row in model.objects.filter(pk__in=ids)}
    missing = [str(i) for i in ids if i not in rows]
    if missing:
        raise ValidationError({field: f"no {model._meta.verbose_name} with id {', '.join(missing)}"})
    return [rows[i] for i in ids]


def _done(change: SeriesChange) -> Response:
    return Response(ChangeSerializer(change).data, status=status.HTTP_201_CREATED)


def _refused(exc: service.SeriesChangeRefused) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    given = serializer_class(data=request.data)
    given.is_valid(raise_exception=True)
    return dict(given.validated_data)


class MergeView(SeriesWrites, APIView):
    @extend_schema(summary="Merge series into one", request=MergeInput, responses={201: ChangeSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(MergeInput, request)
        target = _all_found(Series, [data["target"]], "target")[0]
        others = _all_found(Series, data["others"], "others")
        try:
            return _done(service.merge_series(target, others, actor=request.user, via="api", reason=data["reason"]))
        except service.SeriesChangeRefused as exc:
            return _refused(exc)


class SplitView(SeriesWrites, APIView):
    @extend_schema(summary="Give mangas a series of their own", request=SplitInput, responses={201: ChangeSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(SplitInput, request)
        mangas = _all_found(Manga, data["mangas"], "mangas")
        try:
            return _done(service.split_mangas(mangas, actor=request.user, via="api", reason=data["reason"]))
        except service.SeriesChangeRefused as exc:
            return _refused(exc)


class UndoView(SeriesWrites, APIView):
    @extend_schema(summary="Undo a merge, split or undo", request=ReasonInput, responses={201: ChangeSerializer})
    def post(self, request: Request, pk: str) -> Response:
        data = _valid(ReasonInput, request)
        change = get_object_or_404(SeriesChange, pk=pk)
        try:
            return _done(service.undo_change(change, actor=request.user, via="api", reason=data["reason"]))
        except service.SeriesChangeRefused as exc:
            return _refused(exc)


class ChangeList(SeriesWrites, ListAPIView):
    serializer_class = ChangeSerializer
    pagination_class = Pagination

    @extend_schema(summary="Series changes, newest first (the audit)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[SeriesChange]:
        return SeriesChange.objects.select_related("actor").order_by("-created_at", "-id")


class SuggestionList(SeriesWrites, ListAPIView):
    serializer_class = SuggestionSerializer
    pagination_class = Pagination

    @extend_schema(summary="Suggested merges waiting for a decision, oldest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[SeriesSuggestion]:
        pending = SeriesSuggestion.objects.filter(state=SeriesSuggestion.State.PENDING)
        return pending.select_related("first", "second").order_by("created_at", "id")


class SuggestionDecisionView(SeriesWrites, APIView):
    decision = "confirm"

    @extend_schema(
        summary="Confirm (merge) or reject a suggested merge",
        request=None,
        responses={201: ChangeSerializer, 200: SuggestionSerializer},
    )
    def post(self, request: Request, pk: str) -> Response:
        suggestion = get_object_or_404(SeriesSuggestion, pk=pk)
        try:
            if self.decision == "confirm":
                return _done(service.confirm_suggestion(suggestion, actor=request.user, via="api"))
            service.reject_suggestion(suggestion, actor=request.user)
        except service.SeriesChangeRefused as exc:
            return _refused(exc)
        suggestion.refresh_from_db()
        return Response(SuggestionSerializer(suggestion).data)


class SourceOrderView(SeriesWrites, APIView):
    @extend_schema(
        summary="A series' sources, preferred first ([] follows the global order)",
        request=SourceOrderInput,
        responses=SourceOrderOutput,
    )
    def put(self, request: Request, pk: str) -> Response:
        data = _valid(SourceOrderInput, request)
        series = get_object_or_404(Series, pk=pk, merged_into=None)
        service.set_source_order(series, data["sources"])
        return Response({"id": str(series.pk), "source_order": series.source_order})


class AlternatesView(SeriesWrites, APIView):
    """Whether the series downloads every source's copy of its chapters; off deletes nothing already stored."""

    @extend_schema(
        summary="Download every source's copy of the series' chapters (true) or only the preferred one (false)",
        request=AlternatesInput,
        responses=AlternatesOutput,
    )
    def put(self, request: Request, pk: str) -> Response:
        data = _valid(AlternatesInput, request)
        series = get_object_or_404(Series, pk=pk, merged_into=None)
        service.set_download_alternates(series, data["download_alternates"], actor=request.user, via="api")
        return Response({"id": str(series.pk), "download_alternates": series.download_alternates})
