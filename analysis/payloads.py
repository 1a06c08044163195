"""The analysis job payload, registered as the "analyze" role's one kind from `AnalysisConfig.ready()`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar

from jobs.payloads import Payload


@dataclass(frozen=True)
class AnalyzePage(Payload):
    """Run AI analysis on one page; `force` re-analyses a page that is already done."""

    kind: ClassVar[str] = "analyze_page"
    page_id: uuid.UUID
    force: bool = False

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.page_id}"
