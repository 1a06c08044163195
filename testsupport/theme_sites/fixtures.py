"""pytest fixtures for the theme fixture sites (registered from the root conftest via `pytest_plugins`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.mangathemesia import MangaThemesiaSite
from testsupport.theme_sites.plain import PlainSite


@pytest.fixture
def madara_site() -> Iterator[MadaraSite]:
    """A Madara site on 127.0.0.1 (newer theme: the old chapter endpoint answers 400)."""
    site = MadaraSite()
    yield site
    site.stop()


@pytest.fixture
def mangathemesia_site() -> Iterator[MangaThemesiaSite]:
    """A MangaThemesia site on 127.0.0.1 with its image CDN on another port."""
    site = MangaThemesiaSite()
    yield site
    site.stop()


@pytest.fixture
def madara_load_more_site() -> Iterator[MadaraSite]:
    """A Madara site whose archives page by a "Load more" button."""
    site = MadaraSite(load_more=True)
    yield site
    site.stop()


@pytest.fixture
def plain_site() -> Iterator[PlainSite]:
    """A WordPress blog on a stock theme: no manga preset fits it."""
    site = PlainSite()
    yield site
    site.stop()
