"""Library API: mangas, chapters, page images and the signed-in user's bookmarks.

Access is the policy of `accounts.policy`: reading the library (mangas,
chapters, covers, page images) needs an active user, by session cookie,
`Authorization: Token <key>` (from `POST /api/v1/auth/token/`) or HTTP Basic,
unless the operator opened reads to everyone (`LIBRARY_PUBLIC_READ`).
Bookmarks always need a user and are private: another user's bookmark answers
404, as if it did not exist.

List endpoints run a fixed number of queries whatever the page size: tags
are prefetched and chapter counts are a correlated subquery evaluated for
the page's rows only.
"""

from __future__ import annotations

import mimetypes

from django.db import IntegrityError
from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.drf import API_AUTHENTICATION, CanReadLibrary
from catalog.api import extensions
from catalog.api import serializers as s
from catalog.api.inputs import BoundedJSONParser
from catalog.api.pagination import Pagination, SearchPagination
from catalog.bookmarks import create_bookmark
from catalog.chapter_order import READING_ORDER
from catalog.models import LATEST_CHAPTER_ORDER, Bookmark, Chapter, Manga, Page
from catalog.page_rows import page_by_id
from catalog.search import title_search
from catalog.serving.responder import serve_stored


class LibraryAccess:
    authentication_classes = API_AUTHENTICATION
    permission_classes = (CanReadLibrary,)
    parser_classes = (BoundedJSONParser,)


class MangaListQuery(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Title search: case- and accent-insensitive substring or close match of the title "
        "or an alternative title, best match first (PostgreSQL); title contains (SQLite).",
    )
    tag = serializers.CharField(required=False, max_length=100, help_text="Tag name (exact).")
    status = serializers.ChoiceField(choices=Manga.Status.values, required=False)


def _chapter_count() -> Subquery:
    live = (
        Chapter.objects.filter(manga=OuterRef("pk"), dropped_at__isnull=True)
        .order_by()
        .values("manga")
        .annotate(n=Count("*"))
        .values("n")
    )
    return Coalesce(Subquery(live, output_field=IntegerField()), 0)


def manga_list(q: str | None = None, tag: str | None = None, status: str | None = None) -> QuerySet[Manga]:
    """Mangas ordered by latest chapter (never-updated ones last): an index scan of `manga_latest_chapter_idx`.

    With `q`, the title search of catalog/search.py (trigram indexes on PostgreSQL), best match first.
    """
    mangas = Manga.objects.all()
    if tag:
        mangas = mangas.filter(tags__name=tag)
    if status:
        mangas = mangas.filter(status=status)
    # A search orders by relevance first (catalog/search.py), then by latest chapter.
    mangas = title_search(mangas, q) if q else mangas.order_by(*LATEST_CHAPTER_ORDER)
    return mangas.annotate(chapter_count=_chapter_count()).prefetch_related("tags")


def _stream_file(request: Request, name: str, content_type: str, etag: str) -> HttpResponse:
    """A stored file through the one responder every reader uses (catalog.serving)."""
    if not content_type.startswith("image/"):
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return serve_stored(request._request, name, content_type, etag=etag)


_image_responses = {
    (200, "image/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The image bytes."),
    404: OpenApiResponse(description="Unknown id or no stored file."),
}


# What a manga's chapter summaries read (the rest of a chapter row is left unloaded).
CHAPTER_SUMMARY_COLUMNS = (
    "manga_id", "kind", "volume", "number", "title", "published_at", "sync_state", "page_count", "dropped_at",
)  # fmt: skip


@extend_schema_view(
    list=extend_schema(summary="Mangas, ordered by latest chapter", parameters=[MangaListQuery]),
    retrieve=extend_schema(summary="One manga with its chapters (dropped ones flagged)"),
)
class MangaViewSet(LibraryAccess, viewsets.ReadOnlyModelViewSet):
    pagination_class = SearchPagination

    def get_queryset(self) -> QuerySet[Manga]:
        if self.action == "list":
            params = MangaListQuery(data=self.request.query_params)
            params.is_valid(raise_exception=True)
            return manga_list(**params.validated_data)
        # The summary's columns only: a 2,000-chapter manga loads no keys, URLs or timestamps it does not show.
        summary = Chapter.objects.only(*CHAPTER_SUMMARY_COLUMNS).order_by(*READING_ORDER)
        chapters = Prefetch("chapters", queryset=summary)
        return Manga.objects.annotate(chapter_count=_chapter_count()).prefetch_related("tags", chapters)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return s.MangaListSerializer if self.action == "list" else s.MangaDetailSerializer

    @extend_schema(summary="The manga's cover image", responses=_image_responses)
    @action(detail=True, methods=["get"], url_path="cover")
    def cover(self, request: Request, pk: str | None = None) -> HttpResponse:
        manga = get_object_or_404(Manga.objects.only("cover"), pk=pk)
        if not manga.cover:
            raise Http404("This manga has no stored cover.")
        return _stream_file(request, manga.cover.name, mimetypes.guess_type(manga.cover.name)[0] or "", "")


@extend_schema_view(retrieve=extend_schema(summary="One chapter with its pages (and their analysis)"))
class ChapterViewSet(LibraryAccess, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = s.ChapterDetailSerializer

    def get_queryset(self) -> QuerySet[Chapter]:
        pages = Page.objects.select_related(*extensions.page_select_related()).order_by("index")
        return Chapter.objects.select_related("manga").prefetch_related(Prefetch("pages", queryset=pages))


class PageImageView(LibraryAccess, APIView):
    @extend_schema(
        operation_id="page_image",
        summary="A stored page image, streamed",
        parameters=[OpenApiParameter("pk", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses=_image_responses,
    )
    def get(self, request: Request, pk: str) -> HttpResponse:
        page = page_by_id(pk) or get_object_or_404(Page.objects.only("image", "content_type", "sha256"), pk=pk)
        return _stream_file(request, page.image.name, page.content_type, page.sha256)


@extend_schema_view(
    list=extend_schema(summary="Your bookmarks"),
    create=extend_schema(summary="Bookmark a manga or a chapter (queues its missing chapters)"),
    retrieve=extend_schema(summary="One of your bookmarks"),
    update=extend_schema(summary="Move a chapter bookmark"),
    partial_update=extend_schema(summary="Move a chapter bookmark"),
    destroy=extend_schema(summary="Delete one of your bookmarks"),
)
class BookmarkViewSet(viewsets.ModelViewSet):
    authentication_classes = API_AUTHENTICATION
    permission_classes = (IsAuthenticated,)
    parser_classes = (BoundedJSONParser,)
    serializer_class = s.BookmarkSerializer
    pagination_class = Pagination
    queryset = Bookmark.objects.none()  # for the schema; requests see only their own rows

    def get_queryset(self) -> QuerySet[Bookmark]:
        if getattr(self, "swagger_fake_view", False):
            return Bookmark.objects.none()
        return Bookmark.objects.filter(user=self.request.user).order_by("-created_at", "-id")

    def perform_create(self, serializer: s.BookmarkSerializer) -> None:
        try:
            serializer.instance = create_bookmark(
                user=self.request.user,
                manga=serializer.validated_data["manga"],
                chapter=serializer.validated_data.get("chapter"),
            )
        except IntegrityError as exc:  # a concurrent twin won the unique constraint
            raise serializers.ValidationError("You already have this bookmark.") from exc

    def perform_update(self, serializer: s.BookmarkSerializer) -> None:
        try:
            serializer.save()
        except IntegrityError as exc:
            raise serializers.ValidationError("You already have this bookmark.") from exc
