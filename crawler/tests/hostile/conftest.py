"""The hostile tests' fixtures: a loopback canary, the production outbound rule, short timeouts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testsupport.canary import Canary, loopback_canary

# Every way of writing "this machine" or "inside" we know of; the canary listens on 127.0.0.1 and [::1].
LOOPBACK_FORMS = [
    "127.0.0.1",
    "127.0.0.2",
    "localhost",
    "localhost.",
    "LOCALHOST",
    "app.localhost",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "0.0.0.0",
    "0",
    "2130706433",
    "0x7f000001",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "017700000001",
    "127.1",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",
    "[64:ff9b::7f00:1]",
]
INSIDE_FORMS = [
    "10.0.0.1",
    "192.168.1.1",
    "172.16.0.1",
    "169.254.169.254",
    "[fe80::1]",
    "[fc00::1]",
    "100.64.0.1",
    "224.0.0.1",
]
ALL_FORMS = LOOPBACK_FORMS + INSIDE_FORMS


@pytest.fixture
def canary(no_outbound_allowance, settings) -> Iterator[Canary]:
    """The canary, with the production rule (no allowance) and short timeouts: a guard that let a private
    address through would fail on the timeout in seconds, not hang on 10.0.0.1 for half a minute."""
    settings.CRAWLER_HTTP_TIMEOUT_SECS = 2.0
    settings.CRAWLER_PAGE_DEADLINE_SECS = 4.0
    with loopback_canary() as server:
        yield server


def url_for(form: str, port: int, path: str = "/") -> str:
    return f"http://{form}:{port}{path}"
