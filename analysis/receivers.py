"""What analysis does when the crawler says something happened (connected in `AnalysisConfig.ready`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from analysis.service import enqueue_for_page
from catalog.models import Chapter, Page


def enqueue_chapter_analysis(sender: Any, *, chapter: Chapter, **kwargs: Any) -> None:
    """Queue analysis for the chapter's pages not analysed yet (in-flight ones are deduplicated).

    Not just the pages the download stored: pages kept from an interrupted run
    never reached that point, and would otherwise never be analysed.
    """
    if not settings.ANALYSIS_ENABLED:
        return
    for page in Page.objects.filter(chapter=chapter).exclude(analysis__state="done").order_by("index"):
        enqueue_for_page(page, force=False)
