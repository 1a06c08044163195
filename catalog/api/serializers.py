"""Serializers of the library API (mangas, chapters, pages, bookmarks)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.api import extensions
from catalog.chapter_names import display_title
from catalog.models import Bookmark, Chapter, Manga, Page


def _absolute(context: dict[str, Any], url: str) -> str:
    request = context.get("request")
    return request.build_absolute_uri(url) if request is not None else url


class MangaListSerializer(serializers.ModelSerializer):
    tags = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")
    chapter_count = serializers.IntegerField(read_only=True, help_text="Chapters the source still lists.")
    cover = serializers.SerializerMethodField()

    class Meta:
        model = Manga
        fields = ("id", "title", "status", "tags", "cover", "cover_state", "latest_chapter_at", "chapter_count")

    @extend_schema_field(OpenApiTypes.URI)
    def get_cover(self, manga: Manga) -> str | None:
        if not manga.cover:
            return None
        return _absolute(self.context, reverse("catalog-api:manga-cover", args=[manga.id]))


class ChapterSummarySerializer(serializers.ModelSerializer):
    title = serializers.CharField(
        read_only=True,
        help_text='The chapter\'s own name ("The Gate"), "" when it has none; an extra\'s whole printed name.',
    )
    display_title = serializers.SerializerMethodField(
        help_text='What readers show: "Chapter 12: The Gate", or "Chapter 12" when the chapter has no name; '
        '"Vol. 2 Chapter 1" with a volume; an extra by its printed name, "Side Story 19: The Beach".'
    )
    kind = serializers.CharField(
        read_only=True,
        help_text='"chapter" (the main story) or "extra" (side story, special, notice...): an extra\'s number '
        "counts extras only, so extra 1 and chapter 1 are different chapters.",
    )
    volume = serializers.IntegerField(read_only=True, allow_null=True, help_text="The volume the site prints, if any.")
    dropped = serializers.SerializerMethodField(help_text="The source no longer lists this chapter.")

    class Meta:
        model = Chapter
        fields = (
            "id", "kind", "volume", "number", "title", "display_title", "published_at", "sync_state", "page_count",
            "dropped",
            "dropped_at",
        )  # fmt: skip

    @cached_property
    def _plain_fields(self) -> list[tuple[str, str, serializers.Field]]:
        return [(field.field_name, field.source, field) for field in self._readable_fields]

    def to_representation(self, instance: Chapter) -> dict[str, Any]:
        """DRF's output, read with plain attribute lookups: its generic per-field attribute walk was most of the
        time of a 2,000-chapter manga's response (the list serializer reuses this one instance for every row)."""
        row = {}
        for name, source, field in self._plain_fields:
            if source == "*":
                row[name] = field.to_representation(instance)
                continue
            # A dotted source keeps DRF's own lookup.
            value = field.get_attribute(instance) if "." in source else getattr(instance, source)
            row[name] = None if value is None else field.to_representation(value)
        return row

    def get_display_title(self, chapter: Chapter) -> str:
        return display_title(chapter.number, chapter.title, chapter.kind, chapter.volume)

    def get_dropped(self, chapter: Chapter) -> bool:
        return chapter.dropped_at is not None


class MangaDetailSerializer(MangaListSerializer):
    chapters = ChapterSummarySerializer(many=True, read_only=True)

    class Meta(MangaListSerializer.Meta):
        fields = MangaListSerializer.Meta.fields + ("alt_titles", "description", "authors", "chapters")


class PageSerializer(serializers.ModelSerializer):
    """A stored page; apps built on the catalog add fields (analysis adds `analysis`)."""

    image = serializers.SerializerMethodField()

    class Meta:
        model = Page
        fields = ("id", "index", "image", "content_type", "width", "height", "bytes", "sha256")

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**super().get_fields(), **extensions.page_fields()}

    @extend_schema_field(OpenApiTypes.URI)
    def get_image(self, page: Page) -> str:
        return _absolute(self.context, reverse("catalog-api:page-image", args=[page.id]))


class MangaRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Manga
        fields = ("id", "title")


class ChapterDetailSerializer(ChapterSummarySerializer):
    """A chapter with its pages; apps built on the catalog add fields (analysis adds `analysis_summary`)."""

    manga = MangaRefSerializer(read_only=True)
    pages = PageSerializer(many=True, read_only=True)

    class Meta(ChapterSummarySerializer.Meta):
        fields = ("manga",) + ChapterSummarySerializer.Meta.fields + ("pages",)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        pages = fields.pop("pages")
        return {**fields, **extensions.chapter_fields(), "pages": pages}


class BookmarkSerializer(serializers.ModelSerializer):
    """A bookmark on a manga (`chapter` null) or on one of its chapters; only `chapter` can change later."""

    manga = serializers.PrimaryKeyRelatedField(queryset=Manga.objects.all(), pk_field=serializers.UUIDField())
    chapter = serializers.PrimaryKeyRelatedField(
        queryset=Chapter.objects.all(), pk_field=serializers.UUIDField(), allow_null=True, required=False
    )

    class Meta:
        model = Bookmark
        fields = ("id", "manga", "chapter", "created_at")
        read_only_fields = ("id", "created_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance: Bookmark | None = self.instance
        manga = attrs.get("manga", instance.manga if instance else None)
        chapter = attrs.get("chapter", instance.chapter if instance else None)
        if instance is not None and manga.pk != instance.manga_id:
            raise serializers.ValidationError({"manga": "A bookmark cannot move to another manga."})
        if chapter is not None and chapter.manga_id != manga.pk:
            raise serializers.ValidationError({"chapter": "This chapter belongs to another manga."})
        user = self.context["request"].user
        twins = Bookmark.objects.filter(user=user, manga=manga, chapter=chapter)
        if instance is not None:
            twins = twins.exclude(pk=instance.pk)
        if twins.exists():
            raise serializers.ValidationError("You already have this bookmark.")
        return attrs
