"""The backend interface every analysis backend implements, and its result and error records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sources.errors import CrawlerError


@dataclass(frozen=True)
class AnalysisResult:
    """What one analysis found on one page image."""

    ocr_text: str
    tags: list[str]
    description: str
    nsfw: bool
    nsfw_score: float
    model: str


class AnalysisError(CrawlerError):
    """An analysis attempt failed: an unreachable or erroring endpoint, a timeout, malformed model output,
    an unreadable image. `raw` keeps what the model or endpoint actually said, so an operator can see why
    a page failed without re-running it; it is part of the message the worker stores as the job's error.
    """

    # Enough of a model's answer to diagnose it without bloating the job row.
    RAW_LIMIT = 2000

    def __init__(self, message: str, raw: str = "") -> None:
        self.message = message
        self.raw = raw
        text = message
        if raw:
            text = f"{message}; raw: {raw[: self.RAW_LIMIT]}"
        super().__init__(text)


class AnalysisBackend(Protocol):
    """Analyses one page image. Implementations raise `AnalysisError` for a failed attempt."""

    name: str

    def analyze(self, image_path: str, content_type: str) -> AnalysisResult: ...
