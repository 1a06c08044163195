"""Read progress REST API under /api/v1/progress/: the signed-in user's progress, per chapter.

GET /api/v1/progress/?manga=<id> lists it (paginated); GET and PUT
/api/v1/progress/<chapter id>/ read and set one chapter's. PUT stores what
the client says (it may move backwards: re-reading is allowed); a page past
the chapter's stored pages is a 400 and changes nothing.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.drf import API_AUTHENTICATION
from catalog.api.inputs import AsciiIntegerField, BoundedJSONParser
from catalog.api.pagination import Pagination
from catalog.models import Chapter
from reader.models import ReadProgress
from reader.progress import set_progress, stored_page_count


class ProgressSerializer(serializers.ModelSerializer):
    chapter = serializers.UUIDField(source="chapter_id", read_only=True)
    manga = serializers.UUIDField(source="chapter.manga_id", read_only=True)
    last_page = serializers.IntegerField(read_only=True, help_text="Last page read, 1-based (0: opened, nothing read).")

    class Meta:
        model = ReadProgress
        fields = ("chapter", "manga", "last_page", "completed", "updated_at")
        read_only_fields = fields


class ProgressUpdateSerializer(serializers.Serializer):
    last_page = AsciiIntegerField(min_value=0, max_value=1_000_000, help_text="Last page read, 1-based.")
    completed = serializers.BooleanField(required=False, help_text="Defaults to last_page == the chapter's page count.")


class ProgressAccess:
    authentication_classes = API_AUTHENTICATION
    permission_classes = (IsAuthenticated,)
    parser_classes = (BoundedJSONParser,)


class ProgressListQuery(serializers.Serializer):
    manga = serializers.UUIDField(required=False, help_text="Only this manga's chapters.")


@extend_schema(summary="Your read progress", parameters=[ProgressListQuery])
class ProgressList(ProgressAccess, generics.ListAPIView):
    serializer_class = ProgressSerializer
    pagination_class = Pagination
    queryset = ReadProgress.objects.none()

    def get_queryset(self) -> QuerySet[ReadProgress]:
        if getattr(self, "swagger_fake_view", False):
            return ReadProgress.objects.none()
        params = ProgressListQuery(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        rows = ReadProgress.objects.filter(user=self.request.user).select_related("chapter")
        if "manga" in params.validated_data:
            rows = rows.filter(chapter__manga_id=params.validated_data["manga"])
        return rows.order_by("-updated_at", "-id")


_chapter_param = OpenApiParameter("chapter_id", str, OpenApiParameter.PATH, description="Chapter UUID.")


class ProgressDetail(ProgressAccess, APIView):
    @extend_schema(
        operation_id="progress_retrieve",
        summary="Your progress in one chapter",
        parameters=[_chapter_param],
        responses=ProgressSerializer,
    )
    def get(self, request: Request, chapter_id: str) -> Response:
        chapter = get_object_or_404(Chapter.objects.only("id", "manga_id"), pk=chapter_id)
        progress = ReadProgress.objects.filter(user=request.user, chapter=chapter).first()
        if progress is None:
            progress = ReadProgress(user=request.user, chapter=chapter)
        return Response(ProgressSerializer(progress).data)

    @extend_schema(
        operation_id="progress_update",
        summary="Set your progress in one chapter",
        parameters=[_chapter_param],
        request=ProgressUpdateSerializer,
        responses=ProgressSerializer,
    )
    def put(self, request: Request, chapter_id: str) -> Response:
        chapter = get_object_or_404(Chapter.objects.only("id", "manga_id"), pk=chapter_id)
        body = ProgressUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        pages = stored_page_count(chapter)
        last_page = body.validated_data["last_page"]
        if last_page > pages:
            raise serializers.ValidationError({"last_page": f"This chapter has {pages} stored page(s)."})
        completed = body.validated_data.get("completed", pages > 0 and last_page == pages)
        progress = set_progress(user=request.user, chapter=chapter, last_page=last_page, completed=completed)
        return Response(ProgressSerializer(progress).data)
