"""The MangaDex@Home report: after each image from an at-home node, tell MangaDex how it went.

MangaDex asks every client to POST `{url, success, cached, bytes, duration}`
to `https://api.mangadex.network/report` after loading an image from a
MangaDex@Home node (not from its own uploads host), failures included, so
it can take slow or broken nodes out of rotation (api.mangadex.org/docs,
"MangaDex@Home load successes, failures and retries"). `cached` is whether
the node answered `X-Cache: HIT`; `duration` is milliseconds.

The report is a courtesy, not part of the crawl: a report that fails is
logged and forgotten, never a failed image. It goes through the process's
guarded client (`fetch.pages`), so the outbound rule applies to it as to
every other request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from fetch import outbound
from fetch.pages import shared_client
from sources.answers import HttpImageStream
from sources.mangadex.records import at_home_report

logger = logging.getLogger(__name__)

REPORT_TIMEOUT_SECS = 10.0


class AtHomeReporter:
    """Sends reports to one report URL with the source's User-Agent."""

    def __init__(self, source_id: str, report_url: str, user_agent: str) -> None:
        self.source_id = source_id
        self.report_url = report_url
        self.sent = 0
        self._client = shared_client(
            f"{source_id}:at-home-report", {"User-Agent": user_agent}, timeout=REPORT_TIMEOUT_SECS
        )

    def send(self, body: dict[str, Any]) -> None:
        try:
            answer = self._client.post(self.report_url, json=body)
        except (httpx.HTTPError, outbound.AddressRefused) as exc:
            logger.info("source %s: the at-home report to %s failed: %s", self.source_id, self.report_url, exc)
            return
        if answer.status_code >= 400:
            logger.info("source %s: the at-home report answered %d", self.source_id, answer.status_code)
            return
        self.sent += 1


class ReportedImage:
    """An at-home image stream that reports its outcome when closed (bytes read, whether all of it came)."""

    def __init__(self, stream: HttpImageStream, started: float, report: Callable[[bool, bool, int, int], None]) -> None:
        self._stream = stream
        self._started = started
        self._report = report
        self._bytes = 0
        self._complete = False
        self.url = stream.url
        self.content_type = stream.content_type
        self.declared_length = stream.declared_length

    def iter_bytes(self) -> Iterator[bytes]:
        for chunk in self._stream.iter_bytes():
            self._bytes += len(chunk)
            yield chunk
        self._complete = True

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            cached = self._stream.headers.get("x-cache", "").upper().startswith("HIT")
            duration_ms = round((time.monotonic() - self._started) * 1000)
            self._report(self._complete, cached, self._bytes, duration_ms)


def report_outcome(reporter: AtHomeReporter, url: str) -> Callable[[bool, bool, int, int], None]:
    """The callback a ReportedImage calls: one report for `url`."""

    def report(success: bool, cached: bool, size: int, duration_ms: int) -> None:
        reporter.send(at_home_report(url, success=success, cached=cached, size=size, duration_ms=duration_ms))

    return report
