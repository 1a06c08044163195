"""The analysis backend `settings.ANALYSIS_BACKEND` names."""

from __future__ import annotations

from django.conf import settings

from analysis.backends.base import AnalysisBackend


def get_backend(name: str | None = None) -> AnalysisBackend:
    """The configured backend (or `name`). Cheap to call per job: the local models are loaded once per process."""
    name = name or settings.ANALYSIS_BACKEND
    if name == "openai":
        from analysis.backends.openai import OpenAIVisionBackend

        return OpenAIVisionBackend(
            api_url=settings.VISION_API_URL,
            model=settings.VISION_MODEL,
            api_key=settings.VISION_API_KEY,
            timeout_secs=settings.VISION_TIMEOUT_SECS,
        )
    if name == "local":
        from analysis.backends.local import LocalBackend

        return LocalBackend()
    raise ValueError(f"unknown analysis backend {name!r} (expected 'local' or 'openai')")
