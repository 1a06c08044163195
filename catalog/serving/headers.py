"""Pure decisions about an image response's headers: validators, byte ranges, caching.

Kept apart from the responder so each rule is tested directly, without a
request or a stored file, and so the signed-URL handler that answers without
Django (mangalord/signed_routes.py) answers with the same rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Anything a reader gets is behind its login (or an operator's choice to open reads): never kept by a shared
# proxy. Pages are immutable once stored, but a re-download may replace one: a day, revalidated by the ETag.
CACHE_CONTROL = "private, max-age=86400"

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass(frozen=True)
class ByteRange:
    """Bytes `start` to `end` inclusive of a file of `size` bytes."""

    start: int
    end: int
    size: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    @property
    def content_range(self) -> str:
        return f"bytes {self.start}-{self.end}/{self.size}"


class Unsatisfiable(ValueError):
    """A well-formed range that starts past the end of the file: 416."""


def answer_headers(quoted: str, *, ranges: bool = True) -> list[tuple[str, str]]:
    """The headers every image answer carries (a 304 and a 416 too): its ETag, caching, and whether it takes ranges."""
    headers = [("ETag", quoted)] if quoted else []
    headers.append(("Cache-Control", CACHE_CONTROL))
    if ranges:
        headers.append(("Accept-Ranges", "bytes"))
    return headers


def range_applies(range_header: str, if_range: str | None, quoted: str) -> bool:
    """Whether `Range` is to be honoured: given, and no `If-Range` naming another version (then the whole file)."""
    return bool(range_header) and (if_range is None or if_range == quoted)


def unsatisfiable_range(size: int) -> str:
    """The `Content-Range` of a 416."""
    return f"bytes */{size}"


def quoted_etag(etag: str) -> str:
    return f'"{etag}"' if etag else ""


def etag_matches(if_none_match: str, quoted: str) -> bool:
    """Whether `If-None-Match` names this (strong, quoted) ETag, or is `*` (RFC 9110 §13.1.2, weak comparison)."""
    if not quoted or not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or quoted in tags


def byte_range(header: str, size: int) -> ByteRange | None:
    """The one range `Range: bytes=...` asks of a file of `size` bytes; None to answer the whole file.

    A malformed header, another unit or several ranges are ignored (the
    whole file, 200), as RFC 9110 allows; a range starting past the end
    raises `Unsatisfiable`.
    """
    match = _RANGE.match(header.strip()) if header else None
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = match.group(1), match.group(2)
    if first == "":  # the last N bytes
        suffix = int(last)
        if suffix == 0:
            raise Unsatisfiable(header)
        return ByteRange(max(0, size - suffix), size - 1, size) if size else _unsatisfiable(header)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size:
        raise Unsatisfiable(header)
    if end < start:
        return None
    return ByteRange(start, end, size)


def _unsatisfiable(header: str) -> ByteRange:
    raise Unsatisfiable(header)
