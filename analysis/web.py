"""What analysis adds to the web process's API: the library fields and the force-analyze route.

Registered from `AnalysisConfig.ready()` as factories: the serializers and
the view (Django REST framework with them) are imported when the API first
builds a chapter or its URLconf, so a process that never serves the API (a
crawl worker) never imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import URLPattern, path

from catalog.api import extensions
from crawler.api import routes

if TYPE_CHECKING:
    from rest_framework import serializers


def _page_analysis() -> serializers.Field:
    from analysis.serializers import PageAnalysisSerializer

    return PageAnalysisSerializer(read_only=True, allow_null=True)


def _chapter_summary() -> serializers.Field:
    from analysis.serializers import ChapterAnalysisSummaryField

    return ChapterAnalysisSummaryField()


def _force_analyze_route() -> URLPattern:
    from analysis.api import ForceAnalyzeView

    return path("force-analyze/", ForceAnalyzeView.as_view(), name="force-analyze")


def register() -> None:
    """Each page's analysis (null before the first) and the chapter summary in the library API; force-analyze."""
    extensions.register_page_field("analysis", _page_analysis, select_related="analysis")
    extensions.register_chapter_field("analysis_summary", _chapter_summary)
    routes.register("force-analyze", _force_analyze_route)
