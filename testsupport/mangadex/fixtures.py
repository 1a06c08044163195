"""The `mangadex_standin` fixture: the stand-in running, and every exchange it had checked against the description."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testsupport.mangadex.openapi import assert_exchanges_valid
from testsupport.mangadex.server import MangaDexStandIn


@pytest.fixture
def mangadex_standin() -> Iterator[MangaDexStandIn]:
    standin = MangaDexStandIn()
    try:
        yield standin
    finally:
        standin.stop()
    assert_exchanges_valid(standin.exchanges)
