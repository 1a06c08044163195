"""Read-only API shapes for page analyses and the per-chapter summary."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import Count
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from analysis.models import PageAnalysis
from catalog.models import Chapter

TOP_TAGS = 10


class PageAnalysisSerializer(serializers.ModelSerializer):
    class Meta:
        model = PageAnalysis
        fields = [
            "state",
            "ocr_text",
            "tags",
            "scene_description",
            "nsfw",
            "nsfw_score",
            "backend",
            "model",
            "duration_ms",
            "error",
            "analyzed_at",
            "updated_at",
        ]
        read_only_fields = fields


class TagCountSerializer(serializers.Serializer):
    tag = serializers.CharField()
    count = serializers.IntegerField()


class ChapterAnalysisSummarySerializer(serializers.Serializer):
    """The shape of `chapter_analysis_summary` (for the OpenAPI schema)."""

    pages = serializers.IntegerField()
    by_state = serializers.DictField(child=serializers.IntegerField())
    nsfw_pages = serializers.IntegerField()
    nsfw_page_indexes = serializers.ListField(child=serializers.IntegerField())
    top_tags = TagCountSerializer(many=True)


def chapter_analysis_summary(chapter: Chapter) -> dict[str, Any]:
    """Counts by state (pages never queued count as `not_queued`), NSFW pages and the most common tags."""
    pages = chapter.pages.count()
    by_state = {state: 0 for state in PageAnalysis.State.values}
    rows = PageAnalysis.objects.filter(page__chapter=chapter)
    for row in rows.values("state").annotate(n=Count("id")):
        by_state[row["state"]] = row["n"]
    by_state["not_queued"] = pages - sum(by_state.values())
    done = rows.filter(state=PageAnalysis.State.DONE).values_list("tags", "nsfw", "page__index")
    tags: Counter[str] = Counter()
    nsfw_indexes = []
    for page_tags, nsfw, index in done:
        tags.update(t for t in page_tags or [] if isinstance(t, str))
        if nsfw:
            nsfw_indexes.append(index)
    return {
        "pages": pages,
        "by_state": by_state,
        "nsfw_pages": len(nsfw_indexes),
        "nsfw_page_indexes": sorted(nsfw_indexes),
        "top_tags": [{"tag": tag, "count": n} for tag, n in sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))][
            :TOP_TAGS
        ],
    }


@extend_schema_field(ChapterAnalysisSummarySerializer)
class ChapterAnalysisSummaryField(serializers.Field):
    """The chapter's `chapter_analysis_summary`, as a read-only field of the library API's chapter."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, chapter: Chapter) -> dict[str, Any]:
        return chapter_analysis_summary(chapter)
