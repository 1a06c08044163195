"""What a source's answers mean to the crawler: a status as an error kind, a page, an open image.

The transports (`fetch`) say what came back; here a 404 becomes NotFound,
a login wall SessionExpired, a 5xx SourceUnavailable, so the engine settles
the job by kind (`sources.errors`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fetch.curl_transfer import Transfer, TransferError
from fetch.page_body import declared_length
from sources.errors import CrawlerError, NotFound, SessionExpired, SourceUnavailable
from sources.politeness.gate import Held


def raise_for_status(source_id: str, status: int, url: str, *, image: bool = False) -> None:
    """Map an HTTP status to the crawler's error kinds (2xx/3xx pass).

    401/403 on a page means the session is gone; on an image it is the image
    host refusing this request (a missing Referer, hotlink protection), which
    no session refresh fixes, so it is an ordinary fetch error.
    """
    if status < 400:
        return
    where = f"source {source_id!r}: {url} answered {status}"
    if status in (401, 403) and image:
        raise CrawlerError(f"{where} (the image host refused the request; check image_referer and headers)")
    if status in (401, 403):
        raise SessionExpired(f"{where} (session expired or missing)")
    if status in (404, 410):
        raise NotFound(where)
    if status == 429 or status >= 500:
        raise SourceUnavailable(where)
    raise CrawlerError(where)


@dataclass(frozen=True)
class FetchedPage:
    url: str  # final URL after redirects
    status: int
    html: str
    content_type: str = ""  # the answer's media type, lower-case, without parameters ("" when not said)


class HttpImageStream:
    """An open image answer, its body read through libcurl. Transport errors mid-body surface as SourceUnavailable."""

    def __init__(self, transfer: Transfer, source_id: str, held: Held) -> None:
        self._transfer = transfer
        self._source_id = source_id
        self._held = held
        self.url = transfer.url
        self.content_type = transfer.headers.get("content-type", "").split(";")[0].strip()
        self.declared_length = declared_length(transfer.headers)
        self.headers = transfer.headers  # what an adapter reads beyond the type and length (MangaDex's X-Cache)

    def iter_bytes(self) -> Iterator[bytes]:
        try:
            for chunk in self._transfer.chunks():
                self._held.keep_alive()
                yield chunk
        except TransferError as exc:
            raise SourceUnavailable(
                f"source {self._source_id!r}: image download from {self.url} broke off: {exc}"
            ) from exc

    def close(self) -> None:
        try:
            self._transfer.close()
        finally:
            self._held.release()
