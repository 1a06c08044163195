"""The guard's tests: a loopback canary under the production outbound rule (no allowance)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testsupport.canary import Canary, loopback_canary


@pytest.fixture
def canary(no_outbound_allowance) -> Iterator[Canary]:
    """A server on 127.0.0.1 and [::1] that records every connection; the guard must leave it alone."""
    with loopback_canary() as server:
        yield server
