"""Fixtures for the analysis tests: the stand-in vision endpoint and page rows with real image files."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from analysis.tests.helpers import text_page
from catalog.models import Chapter, Manga, Page, Source
from testsupport.vision_standin import VisionStandIn

FIXTURES = Path(__file__).parent / "fixtures"
_seq = itertools.count(1)


@pytest.fixture
def vision_server(settings) -> Iterator[VisionStandIn]:
    """A live stand-in vision endpoint on 127.0.0.1, with the openai backend pointed at it."""
    with VisionStandIn() as server:
        settings.ANALYSIS_BACKEND = "openai"
        settings.VISION_API_URL = server.url
        settings.VISION_MODEL = "standin-vision"
        settings.VISION_API_KEY = ""
        settings.VISION_TIMEOUT_SECS = 5.0
        yield server


@pytest.fixture
def chapter(db) -> Chapter:
    src = Source.objects.create(id="analysis-test", name="Analysis test", base_url="http://analysis.example")
    manga = Manga.objects.create(title="Analysis Test Manga")
    return Chapter.objects.create(manga=manga, source=src, source_chapter_key="c1", number=Decimal("1"))


@pytest.fixture
def make_page(chapter: Chapter) -> Callable[..., Page]:
    """Create a stored page of `chapter` whose image file holds `data` (a drawn text page by default)."""

    def make(data: bytes | None = None, content_type: str = "image/png", index: int | None = None) -> Page:
        data = data if data is not None else text_page()
        idx = index if index is not None else next(_seq)
        row = Page(chapter=chapter, index=idx, content_type=content_type, bytes=len(data), sha256="0" * 64)
        row.image.save(f"analysis-{idx}", ContentFile(data), save=False)
        row.save()
        return row

    return make


@pytest.fixture
def astronaut_path() -> str:
    """A real ordinary photograph (see fixtures/README.md)."""
    return str(FIXTURES / "astronaut.jpg")
