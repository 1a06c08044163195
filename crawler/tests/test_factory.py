"""The crawler builds every kind's adapter: one builder per kind in the table, each giving its kind's adapter."""

from __future__ import annotations

import pytest

from catalog.models import Source
from crawler.factory import BUILDERS, get_source
from crawler.politeness.limiter import SourceLimiter
from sources import kinds
from sources.html import HtmlSource
from sources.mangadex.adapter import MangaDexSource
from sources.suwayomi.adapter import SuwayomiSource

ADAPTERS = {"html": HtmlSource, "demo": HtmlSource, "mangadex": MangaDexSource, "suwayomi": SuwayomiSource}
SETTINGS = {
    "html": {"preset": "madara", "list_url": "/manga/?page={page}"},
    "demo": {},
    "mangadex": {},
    "suwayomi": {"suwayomi_source": "1"},
}


def test_every_kind_in_the_table_has_a_builder_and_no_builder_is_left_over():
    assert set(BUILDERS) == set(kinds.KINDS) == set(ADAPTERS)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_each_kind_is_built_as_its_adapter_on_the_sources_limiter(kind):
    row = Source.objects.create(
        id=f"s-{kind}", name=kind, kind=kind, base_url="http://127.0.0.1:1/", settings=SETTINGS[kind]
    )

    adapter = get_source(row)

    try:
        assert type(adapter) is ADAPTERS[kind]
        # Every request waits on the limiter every worker shares, not an adapter's own unlimited gate.
        assert isinstance(adapter._gate, SourceLimiter)
    finally:
        adapter.close()
