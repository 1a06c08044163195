"""MangaDex's rate-limit reset header read as Retry-After, and the hosts a MangaDex source may reach."""

from __future__ import annotations

import pytest

from sources.errors import FetchRefused
from sources.mangadex.transport import MangaDexGuard, retry_after_secs


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"x-ratelimit-retry-after": "1000030"}, "30"),
        ({"x-ratelimit-retry-after": "1000000.2"}, "1"),
        ({"x-ratelimit-retry-after": "999990"}, "0"),  # already reset
        ({"retry-after": "7", "x-ratelimit-retry-after": "1000030"}, "7"),  # a plain Retry-After wins
        ({"x-ratelimit-retry-after": "soon"}, None),
        ({"x-ratelimit-retry-after": "inf"}, None),
        ({}, None),
    ],
)
def test_the_reset_time_becomes_seconds_to_wait(headers, expected):
    assert retry_after_secs(headers, 1_000_000.0) == expected


def test_the_guard_allows_the_api_the_uploads_host_and_at_home_nodes_on_any_port():
    guard = MangaDexGuard("md", "https://api.mangadex.org", "https://uploads.mangadex.org", ("*.mangadex.network",))
    assert guard.allows("https://api.mangadex.org/manga?limit=100")
    assert guard.allows("https://uploads.mangadex.org/covers/m/c.jpg")
    assert guard.allows("https://abc.xyz.mangadex.network:44300/token/data/h/1.png")
    assert not guard.allows("https://mangadex.network.evil.example/data/h/1.png")
    assert not guard.allows("https://api.mangadex.org:8443/manga")
    with pytest.raises(FetchRefused, match="'md'"):
        guard.check("https://example.com/data/h/1.png", what="page image")
