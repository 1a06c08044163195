"""Image bytes and byte streams for the storage tests (local and S3)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from PIL import Image

from catalog.storage import store_image_stream
from sources.errors import SourceUnavailable


class ChunkStream:
    """An ImageStream over bytes, optionally failing after `fail_after` bytes like a dropped connection."""

    def __init__(self, data: bytes, *, chunk: int = 1000, fail_after: int | None = None, declared: int | None = None):
        self.data, self.chunk, self.fail_after = data, chunk, fail_after
        self.content_type = "image/whatever"
        self.declared_length = declared
        self.consumed = 0

    def iter_bytes(self) -> Iterator[bytes]:
        for start in range(0, len(self.data), self.chunk):
            if self.fail_after is not None and start >= self.fail_after:
                raise SourceUnavailable("connection reset mid-body")
            self.consumed += 1
            yield self.data[start : start + self.chunk]

    def close(self) -> None:
        pass


def image_bytes(fmt: str, size: tuple[int, int] = (120, 80)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, format=fmt)
    return out.getvalue()


def store_from(source, url):
    """Store the image at `url` through the source's guarded stream, as the pipeline does."""
    stream = source.open_image(url)
    try:
        return store_image_stream(stream, directory="pages/demo")
    finally:
        stream.close()
