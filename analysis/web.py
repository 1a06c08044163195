"""What analysis adds to the web process's library API: each page's analysis and the chapter summary.

Registered from `AnalysisConfig.ready()` as factories: the serializers
(Django REST framework with them) are imported when the API first builds a
chapter, so a process that never serves the API (a crawl worker) never
imports them. The operator's force-analyze route is the console's
(`console.api.analysis`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.api import extensions

if TYPE_CHECKING:
    from rest_framework import serializers


def _page_analysis() -> serializers.Field:
    from analysis.serializers import PageAnalysisSerializer

    return PageAnalysisSerializer(read_only=True, allow_null=True)


def _chapter_summary() -> serializers.Field:
    from analysis.serializers import ChapterAnalysisSummaryField

    return ChapterAnalysisSummaryField()


def register() -> None:
    """Each page's analysis (null before the first) and the chapter summary in the library API."""
    extensions.register_page_field("analysis", _page_analysis, select_related="analysis")
    extensions.register_chapter_field("analysis_summary", _chapter_summary)
