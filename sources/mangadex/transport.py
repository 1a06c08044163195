"""A MangaDex source's HTTP: the shared source transport, with MangaDex's hosts and its rate-limit header.

MangaDex answers a 429 with `X-RateLimit-Retry-After`, the Unix time the
limit resets, not with `Retry-After`; read as seconds it cools the whole
source down until then (every worker waits, the job is deferred, no attempt
is burnt), exactly as a `Retry-After` would.

The hosts a source may reach are its API, its cover host and the hosts the
at-home server hands out (`at_home_hosts`): MangaDex@Home nodes are chosen
per chapter and listen on the port their operator picked, so those names
match on any port. Every address is still checked by the outbound rule
when the connection is made.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from sources.hosts import HostGuard
from sources.http import SourceHttp
from sources.politeness.gate import check_answer

RESET_HEADER = "x-ratelimit-retry-after"


def retry_after_secs(headers: Mapping[str, str], now: float) -> str | None:
    """A Retry-After value for an answer: its own, else MangaDex's reset time as seconds from `now` (Unix time)."""
    plain = headers.get("retry-after")
    if plain is not None:
        return plain
    reset = headers.get(RESET_HEADER)
    if reset is None:
        return None
    try:
        at = float(reset)
    except ValueError:
        return None
    if not math.isfinite(at):
        return None
    return str(max(math.ceil(at - now), 0))


def host_matches(host: str, pattern: str) -> bool:
    """`pattern` is a host name or `*.suffix` (any depth below the suffix)."""
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


class MangaDexGuard(HostGuard):
    """The API's origin, the cover host, and the at-home hosts on any port."""

    def __init__(self, source_id: str, api_url: str, uploads_url: str, at_home_hosts: tuple[str, ...]) -> None:
        super().__init__(source_id, api_url, (urlsplit(uploads_url).netloc,))
        self.at_home_hosts = at_home_hosts

    def allows(self, url: str) -> bool:
        if super().allows(url):
            return True
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return False
        return any(host_matches(parts.hostname, pattern) for pattern in self.at_home_hosts)


class MangaDexHttp(SourceHttp):
    """SourceHttp that also reads `X-RateLimit-Retry-After` off a 429."""

    def _answered(self, answer: Any, url: str, set_cookies: list[str]) -> Any:
        if answer.status_code == 429 and "retry-after" not in answer.headers:
            try:
                check_answer(self.gate, 429, retry_after_secs(answer.headers, time.time()), url)
            except BaseException:
                answer.close()
                raise
        return super()._answered(answer, url, set_cookies)
