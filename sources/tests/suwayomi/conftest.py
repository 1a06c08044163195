from __future__ import annotations

from collections.abc import Iterator

import pytest

from testsupport.suwayomi.server import SuwayomiStandin, suwayomi_standin


@pytest.fixture
def standin() -> Iterator[SuwayomiStandin]:
    with suwayomi_standin() as server:
        yield server
    assert server.invalid == [], "a document the adapter sent is not valid against the recorded schema"
