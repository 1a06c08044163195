"""Series in the library API, for readers: one entry per series, and a series' chapters across its sources.

`GET /api/v1/library/series/` lists live series (merged ones are gone from it) by
title, each with its sources' mangas in the series' source order;
`GET /api/v1/library/series/<id>/` adds the chapter list of catalog.series_chapters:
one entry per chapter key, shown from the preferred source that has it
downloaded, the other sources' copies as alternates. Reads follow the
library's access policy like every other list (accounts.policy).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, viewsets

from catalog import series as service
from catalog.api.pagination import Pagination
from catalog.api.serializers import ChapterSummarySerializer
from catalog.api.views import LibraryAccess
from catalog.models import Chapter, Manga, MangaSource, Series
from catalog.series_books import chapter_union
from catalog.series_chapters import SeriesChapter
from listing.paginators import PageRowsPaginator


def ordered_mangas(series: Series) -> list[Manga]:
    """The series' mangas in its source order (prefetched `mangas` with their `sources`)."""
    first_source = {m.pk: next((s.source_id for s in m.sources.all()), "") for m in series.mangas.all()}
    order = service.source_order(series.source_order, first_source.values())
    rank = {source: i for i, source in enumerate(order)}
    return sorted(series.mangas.all(), key=lambda m: (rank.get(first_source[m.pk], len(rank)), str(m.pk)))


class SeriesMangaSerializer(serializers.ModelSerializer):
    source = serializers.SerializerMethodField()

    class Meta:
        model = Manga
        fields = ("id", "title", "source", "cover_state", "latest_chapter_at")

    def get_source(self, manga: Manga) -> str | None:
        links = list(manga.sources.all())
        return links[0].source_id if links else None


class SeriesListSerializer(serializers.ModelSerializer):
    mangas = serializers.SerializerMethodField(help_text="Each source's copy, preferred source first.")

    class Meta:
        model = Series
        fields = ("id", "title", "source_order", "mangas")

    def get_mangas(self, series: Series) -> list[dict[str, Any]]:
        return SeriesMangaSerializer(ordered_mangas(series), many=True).data  # type: ignore[return-value]


class AlternateSerializer(serializers.ModelSerializer):
    class Meta:
        model = Chapter
        fields = ("id", "source", "sync_state", "page_count")


class SeriesChapterSerializer(serializers.Serializer):
    key = serializers.CharField(source="key.label", help_text='The chapter key: "c12", "v2 c1", "extra 19".')
    chapter = ChapterSummarySerializer(source="shown", help_text="The copy shown: the preferred source's.")
    source = serializers.CharField(source="shown.source_id")
    alternates = AlternateSerializer(many=True, help_text="The other sources' copies, preferred first.")


class SeriesDetailSerializer(SeriesListSerializer):
    chapters = serializers.SerializerMethodField()

    class Meta(SeriesListSerializer.Meta):
        fields = SeriesListSerializer.Meta.fields + ("chapters",)

    @extend_schema_field(SeriesChapterSerializer(many=True))
    def get_chapters(self, series: Series) -> list[dict[str, Any]]:
        return SeriesChapterSerializer(series_chapters(series), many=True).data  # type: ignore[return-value]


def series_chapters(series: Series) -> list[SeriesChapter[Chapter]]:
    """The union of the series' live chapters, in reading order."""
    return chapter_union(series.pk)


def _with_mangas(queryset: QuerySet[Series]) -> QuerySet[Series]:
    links = Prefetch("sources", queryset=MangaSource.objects.order_by("created_at"))
    mangas = Prefetch("mangas", queryset=Manga.objects.prefetch_related(links).order_by("id"))
    return queryset.prefetch_related(mangas)


class SeriesPagination(Pagination):
    # A deep page walks the live-title index for the page's keys alone (an index-only scan), then reads 50 rows.
    django_paginator_class = PageRowsPaginator


@extend_schema_view(
    list=extend_schema(summary="Series (one entry per series, whatever its sources), by title"),
    retrieve=extend_schema(summary="One series with its chapters across sources"),
)
class SeriesViewSet(LibraryAccess, viewsets.ReadOnlyModelViewSet):
    pagination_class = SeriesPagination
    # Only an id is a series: "merge", "split" and the other operator routes beside it are not.
    lookup_value_regex = "[0-9a-fA-F-]{36}"

    def get_queryset(self) -> QuerySet[Series]:
        return _with_mangas(Series.objects.filter(merged_into=None).order_by("title", "id"))

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return SeriesListSerializer if self.action == "list" else SeriesDetailSerializer
