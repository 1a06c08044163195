"""pytest fixtures for the live demo site (registered from the root conftest via `pytest_plugins`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from demo.site.server import DemoSite, start_demo_site

# Small enough that a full crawl in a test takes a second or two, big enough for two list pages.
SMALL_CATALOG: dict[str, Any] = {"mangas": 12, "chapters": (2, 3), "pages": (2, 3)}


@pytest.fixture
def demo_site_factory() -> Iterator[Callable[..., DemoSite]]:
    """Start demo sites with catalog kwargs (mangas, chapters, pages, seed); all are stopped after the test."""
    started: list[DemoSite] = []

    def start(**catalog: Any) -> DemoSite:
        site = start_demo_site("127.0.0.1", 0, **{**SMALL_CATALOG, **catalog})
        started.append(site)
        return site

    yield start
    for site in started:
        site.stop()


@pytest.fixture
def demo_site(demo_site_factory: Callable[..., DemoSite]) -> DemoSite:
    """A live demo site with a 12-manga catalog on 127.0.0.1, faults off."""
    return demo_site_factory()


@pytest.fixture
def demo_source(db: None, demo_site: DemoSite):
    """The `catalog.Source` row for `demo_site` (id "demo", kind "demo")."""
    from catalog.models import Source

    return Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=demo_site.base_url)
