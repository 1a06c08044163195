"""The operator's control over page analysis: force re-analysis of a page.

Shaped like the other `console.control` functions (keyword arguments, an audit row per
action, `ControlError`s for refusals), so the admin API and the Django admin
call this one function and audit alike.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from analysis.service import EnqueueForPageOutcome, enqueue_for_page
from catalog.models import Page
from console.control.errors import ControlError
from crawler import audit


class AnalysisDisabled(ControlError):
    """Analysis is switched off (ANALYSIS_ENABLED=false): nothing would run the job."""


def force_analyze(*, actor: Any, page: Page) -> EnqueueForPageOutcome:
    """Re-analyse a page even if done: upgrade, release-and-rerun or insert (see `enqueue_for_page`).

    Returns the service's outcome enum, which the audit row records.
    """
    if not settings.ANALYSIS_ENABLED:
        raise AnalysisDisabled("analysis is disabled (ANALYSIS_ENABLED=false)")
    with transaction.atomic():
        outcome = enqueue_for_page(page, force=True)
        audit.record(
            actor,
            "force_analyze",
            scope="page",
            target_id=page.id,
            detail={"outcome": outcome.value},
        )
    return outcome
