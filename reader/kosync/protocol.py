"""kosync's wire rules as pure functions: errors, and a page of a CBZ as KOReader reports it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catalog.inputs import BadInteger, parse_bounded_int

# What KOReader shows as the device that last wrote a position it did not write itself.
SERVER_DEVICE = "Mangalord"


class KosyncError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class PageProgress:
    last_page: int  # 1-based
    pages: int
    updated_at: datetime


def page_from_report(progress: Any, percentage: Any, pages: int) -> int | None:
    """The 1-based page KOReader reports for a paged document (a CBZ): `progress` is the page number.

    None when the report is not one a CBZ produces (an XPointer of a
    reflowable book, a page past the end, a percentage that is no number).
    """
    if isinstance(percentage, bool) or not isinstance(percentage, int | float):
        return None
    if isinstance(progress, bool):
        return None
    if not math.isfinite(percentage):
        return None
    if isinstance(progress, str):
        try:  # ASCII digits only: "²".isdigit() is true and int("²") raises
            progress = parse_bounded_int(progress.strip(), low=1, high=max(pages, 1))
        except BadInteger:
            return None
    if not isinstance(progress, int) or not 1 <= progress <= pages:
        return None
    return progress


def document_progress(document: str, progress: PageProgress) -> dict[str, Any]:
    """GET /syncs/progress/<document>'s answer for a stored position."""
    return {
        "document": document,
        "progress": str(progress.last_page),
        "percentage": round(progress.last_page / progress.pages, 4) if progress.pages else 0,
        "device": SERVER_DEVICE,
        "device_id": SERVER_DEVICE.lower(),
        "timestamp": int(progress.updated_at.timestamp()),
    }
