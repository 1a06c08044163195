"""Streaming, atomic image storage through Django's storage API.

An image goes from the source to storage one chunk at a time: peak memory is
about one HTTP chunk plus the 64-byte sniff prefix, whatever the image size
(a JPEG up to JPEG_WALK_IN_MEMORY_BYTES keeps its chunks until its framing is
walked, see `catalog.image_checks.checked_size`).
On the local filesystem the bytes land in a temp file in the target
directory, are fsynced (or, for a batch, made durable together: see
`make_stored_durable`), checked, and renamed to a fresh `<uuid>.<ext>` name,
so a reader never sees a half-written page and a failure (served as a
non-image type, not an image, over the byte or pixel cap, connection cut
mid-body, undecodable, over the decode budget) leaves no file at all. Each
image passes `catalog.image_checks` once here (a reduced-size decode after
its header passed the pixel cap), so a garbled body or a decompression bomb
never reaches a reader.
Other storages (S3-compatible: catalog/s3.py) have no rename, so the bytes
are staged in a local temp file with the same checks, decoded, and only then
handed to `storage.save`, which for S3 is a multipart upload from that file:
the object appears only when it is complete and checked, and a failure
anywhere (source cut, cap, decode, upload) leaves no object. Staging on disk
keeps memory flat and gives the decoder a file to read.

Storage keys are built by callers from our own ids (`pages/<chapter id>`),
never from source strings; anything else is refused.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Protocol

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, default_storage

from catalog.errors import ImageRejected
from catalog.image_checks import (
    SNIFF_BYTES,
    check_declared_type,
    checked_size,
    describe_non_image,
    sniff_image_type,
)

# A JPEG up to this size is walked (`catalog.jpeg_frame`) in the chunks it arrived in, instead of mapping the
# file just written back in: a page's mapping and its faults cost more than the walk itself. Larger ones are
# walked from the file, so memory stays flat whatever the size.
JPEG_WALK_IN_MEMORY_BYTES = 4 * 1024 * 1024
COPY_CHUNK_BYTES = 1024 * 1024
_DIRECTORY = re.compile(r"^[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*$")


class ByteStream(Protocol):
    def iter_bytes(self) -> Iterator[bytes]: ...


@dataclass(frozen=True)
class StoredImage:
    name: str  # storage key, e.g. "pages/<chapter id>/<uuid>.png"
    content_type: str
    width: int
    height: int
    size: int
    sha256: str


def validate_directory(directory: str) -> str:
    """Accept only slash-separated segments of [A-Za-z0-9_-]: no '..', no absolute paths, no source strings."""
    if not isinstance(directory, str) or not _DIRECTORY.match(directory):
        raise ValueError(f"storage directory {directory!r} must be relative segments of letters, digits, '_' or '-'")
    return directory


class _Meter:
    """Counts, hashes and caps the bytes as they pass; sniffs the first 64."""

    def __init__(self, chunks: Iterator[bytes], max_bytes: int) -> None:
        self._chunks = chunks
        self._max = max_bytes
        self.size = 0
        self.hash = hashlib.sha256()
        self._kept: list[bytes] | None = None
        self._kept_limit = 0

    def keep_up_to(self, limit: int, prefix: bytes) -> None:
        """Keep `prefix` (what `sniff` returned) and the chunks that pass from here on, while within `limit` bytes."""
        self._kept_limit = limit
        self._kept = [prefix] if self.size <= limit else None

    def kept(self) -> bytes | None:
        """The bytes kept since `keep_up_to`, when the whole stayed within its limit."""
        return None if self._kept is None else b"".join(self._kept)

    def sniff(self) -> tuple[bytes, str, str]:
        """Read until 64 bytes are in hand; returns (those bytes, content type, extension) or raises."""
        prefix = b""
        while len(prefix) < SNIFF_BYTES:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            prefix += chunk
        kind = sniff_image_type(prefix[:SNIFF_BYTES])
        if kind is None:
            raise ImageRejected(
                f"not an image: the first bytes look like {describe_non_image(prefix[:SNIFF_BYTES])}, "
                "not JPEG/PNG/WebP/GIF/AVIF"
            )
        return self._count(prefix), *kind

    def rest(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if chunk:
                yield self._count(chunk)

    def _count(self, chunk: bytes) -> bytes:
        self.size += len(chunk)
        if self.size > self._max:
            raise ImageRejected(f"image exceeds the byte cap of {self._max} bytes (CRAWLER_MAX_IMAGE_BYTES)")
        self.hash.update(chunk)
        if self._kept is not None:
            if self.size <= self._kept_limit:
                self._kept.append(chunk)
            else:
                self._kept = None
        return chunk


def store_image_stream(
    stream: ByteStream,
    *,
    directory: str,
    max_bytes: int | None = None,
    max_pixels: int | None = None,
    storage: Storage | None = None,
    durable: bool = True,
) -> StoredImage:
    """Stream `stream` into `directory` of `storage` (default_storage); returns what was stored.

    Raises ImageRejected (no file left behind) when the response declares a
    type other than an image, the bytes are not an image, exceed `max_bytes`
    (default settings.CRAWLER_MAX_IMAGE_BYTES) or `max_pixels` (default
    settings.CRAWLER_MAX_IMAGE_PIXELS), or do not decode; any error the stream
    raises mid-body propagates, also leaving no file. The caller closes the stream.

    `durable=False` leaves the file's durability, its bytes and its name, to
    the caller, who must call `make_stored_durable` before anything that
    records the name is committed (a chapter's pages: once per batch of rows,
    not a file and a directory fsync a page).
    """
    directory = validate_directory(directory)
    storage = storage or default_storage
    limit = max_bytes if max_bytes is not None else settings.CRAWLER_MAX_IMAGE_BYTES
    pixels = max_pixels if max_pixels is not None else settings.CRAWLER_MAX_IMAGE_PIXELS
    check_declared_type(getattr(stream, "content_type", "") or "")
    declared = getattr(stream, "declared_length", None)
    if isinstance(declared, int) and declared > limit:
        raise ImageRejected(f"image declares {declared} bytes, over the byte cap of {limit} (CRAWLER_MAX_IMAGE_BYTES)")
    meter = _Meter(iter(stream.iter_bytes()), limit)
    prefix, content_type, ext = meter.sniff()
    if content_type == "image/jpeg":
        meter.keep_up_to(JPEG_WALK_IN_MEMORY_BYTES, prefix)
    name = f"{directory}/{uuid.uuid4().hex}.{ext}"
    if isinstance(storage, FileSystemStorage):
        width, height = _write_local(storage, name, prefix, content_type, meter, pixels, durable)
    else:
        width, height = _write_via_storage_api(storage, name, prefix, content_type, meter, pixels)
    return StoredImage(name, content_type, width, height, meter.size, meter.hash.hexdigest())


def _write_local(
    storage: FileSystemStorage,
    name: str,
    prefix: bytes,
    content_type: str,
    meter: _Meter,
    max_pixels: int,
    durable: bool,
) -> tuple[int, int]:
    """Temp file beside the target, fsync (`durable`), decode check, atomic rename; the temp file goes on any
    failure."""
    final_path = storage.path(name)
    target_dir = os.path.dirname(final_path)
    os.makedirs(target_dir, exist_ok=True)
    fd, temp_path = tempfile.mkstemp(dir=target_dir, prefix=".incoming-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(prefix)
            for chunk in meter.rest():
                out.write(chunk)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        size = checked_size(temp_path, content_type, max_pixels, meter.kept())
        if storage.file_permissions_mode is not None:
            os.chmod(temp_path, storage.file_permissions_mode)
        os.replace(temp_path, final_path)
    except BaseException:
        _unlink_quietly(temp_path)
        raise
    if durable:
        _fsync_directory(target_dir)
    return size


def _write_via_storage_api(
    storage: Storage, name: str, prefix: bytes, content_type: str, meter: _Meter, max_pixels: int
) -> tuple[int, int]:
    """Stage in a local temp file (checked and decoded there), then one upload; nothing is stored on failure."""
    with tempfile.NamedTemporaryFile(prefix="mangalord-incoming-", dir=settings.FILE_UPLOAD_TEMP_DIR) as staged:
        staged.write(prefix)
        for chunk in meter.rest():
            staged.write(chunk)
        staged.flush()
        size = checked_size(staged.name, content_type, max_pixels, meter.kept())
        staged.seek(0)
        saved = storage.save(name, File(staged, name=name))
    if saved != name:  # the storage renamed it: a name we did not build would go unreferenced
        storage.delete(saved)
        raise RuntimeError(f"storage saved {name!r} as {saved!r}; storage keys must be kept as given")
    return size


def open_stored(name: str, *, storage: Storage | None = None) -> IO[bytes]:
    """A stored file opened for reading in chunks; FileNotFoundError when it is missing.

    S3 storages stream the GET body (catalog/s3.py) instead of downloading
    the whole object first; others use `storage.open`.
    """
    storage = storage or default_storage
    opener = getattr(storage, "open_stream", None)
    if opener is not None:
        return opener(name)
    return storage.open(name, "rb")


@contextmanager
def local_copy(name: str, *, storage: Storage | None = None, suffix: str = "") -> Iterator[str]:
    """A local filesystem path to the stored file `name`, for code that needs one (decoders, models).

    Local storage hands out its own path (which may name no file: the caller
    opens it). A remote one (S3-compatible) is streamed into a temp file in
    chunks, never read whole, and the copy is removed afterwards;
    FileNotFoundError when nothing is stored under `name`.
    """
    storage = storage or default_storage
    if isinstance(storage, FileSystemStorage):
        yield storage.path(name)
        return
    with (
        tempfile.NamedTemporaryFile(prefix="mangalord-copy-", suffix=suffix, dir=settings.FILE_UPLOAD_TEMP_DIR) as copy,
        open_stored(name, storage=storage) as source,
    ):
        shutil.copyfileobj(source, copy, COPY_CHUNK_BYTES)
        copy.flush()
        yield copy.name


def delete_stored(name: str, *, storage: Storage | None = None) -> None:
    """Delete a stored file; a missing file or an empty name is fine (deletes are idempotent)."""
    if name:
        (storage or default_storage).delete(name)


def make_stored_durable(directory: str, *, storage: Storage | None = None) -> None:
    """Make what `store_image_stream(durable=False)` put in `directory` durable: the files' bytes and their names.

    Local storage: one `syncfs` of the filesystem holding `directory`, which
    writes out and commits every file stored there since the last call in one
    journal commit, where an fsync a file and one of the directory cost a
    commit each (and a disk cache flush each, on a NAS's disks). Where the
    system has no `syncfs`, `sync`. An object store's upload is durable when
    it returns: nothing to do.
    """
    storage = storage or default_storage
    if isinstance(storage, FileSystemStorage):
        path = storage.path(validate_directory(directory))
        if os.path.isdir(path):
            fd = os.open(path, os.O_RDONLY)
            try:
                _syncfs(fd)
            finally:
                os.close(fd)


def _load_syncfs() -> Callable[[int], int] | None:
    function = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    if function is not None:
        function.argtypes = [ctypes.c_int]
        function.restype = ctypes.c_int
    return function


_LIBC_SYNCFS = _load_syncfs()


def _syncfs(fd: int) -> None:
    """syncfs(2) of the filesystem holding `fd`; its write-back errors raise OSError."""
    if _LIBC_SYNCFS is None:
        os.sync()
    elif _LIBC_SYNCFS(fd) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"syncfs failed: {os.strerror(error)}")


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_directory(path: str) -> None:
    """Make the rename itself durable: a crash after this keeps the new name."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
