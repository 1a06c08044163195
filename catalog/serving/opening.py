"""A stored file opened for an answer: its handle positioned at the first byte wanted, and its full size.

Local storage opens the file itself (no Django `File` wrapper) and learns
its size from the open descriptor. An S3-compatible storage streams the GET
body (catalog/s3.py) instead of downloading the whole object first; a byte
range is asked of the object store, never skipped over here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

from django.core.files.storage import FileSystemStorage, Storage, default_storage

from catalog.serving.headers import ByteRange


@dataclass
class Body:
    """An open stored file (`handle`, positioned) and the size of the whole file."""

    handle: IO[bytes]
    size: int

    def close(self) -> None:
        self.handle.close()


def stored_size(name: str, storage: Storage | None = None) -> int:
    """The size of the stored file; FileNotFoundError (or another OSError) when it is missing."""
    storage = storage or default_storage
    if isinstance(storage, FileSystemStorage):
        return os.stat(storage.path(name)).st_size
    return int(storage.size(name))


def open_body(name: str, wanted: ByteRange | None = None, storage: Storage | None = None) -> Body:
    """`name` opened at `wanted.start` (or its first byte); FileNotFoundError / OSError when it is missing."""
    storage = storage or default_storage
    if isinstance(storage, FileSystemStorage):
        handle = open(storage.path(name), "rb")  # noqa: SIM115 (the response closes it)
        size = os.fstat(handle.fileno()).st_size
        if wanted is not None:
            handle.seek(wanted.start)
        return Body(handle, size)
    opener = getattr(storage, "open_stream", None)
    if opener is None:
        stored = storage.open(name, "rb")
        if wanted is not None:
            stored.seek(wanted.start)
        return Body(stored, int(storage.size(name)))  # type: ignore[arg-type]  # a File reads like IO[bytes]
    if wanted is None:
        stream = opener(name)
        return Body(stream, stream.size)
    return Body(opener(name, byte_range=(wanted.start, wanted.end)), wanted.size)
