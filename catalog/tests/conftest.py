"""Fixtures shared by the catalog's storage tests (local filesystem and S3)."""

import pytest

from sources.config import HtmlSourceConfig
from sources.demo import demo_settings
from sources.html import HtmlSource


@pytest.fixture
def demo_images(demo_site):
    """(source, URL) of the demo site's first page image, fetched through the production HTML source."""
    config = HtmlSourceConfig.from_settings(demo_settings(), source_id="demo")
    source = HtmlSource("demo", demo_site.base_url, config)
    chapter = demo_site.catalog[0].chapters[0]
    url = demo_site.url(f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}")
    yield source, url
    source.close()
