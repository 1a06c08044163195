"""S3-compatible storage (AWS S3, MinIO, Ceph, ...) for covers and pages, on django-storages.

Selected by `STORAGE_BACKEND=s3` (see mangalord/settings.py). Two things on
top of django-storages' S3Storage:

- `open_stream(name)`: a read straight from the GET response body, chunk by
  chunk. S3Storage.open() downloads the whole object into a spooled file
  before the first byte is returned; an image endpoint would wait for, and
  the analysis copy would hold, all of it.
- `transfer_config()`: multipart uploads of 8 MiB parts, one part in memory
  at a time, so a 150 MB page costs one part of RSS, not the whole image.
  Multipart is atomic on S3: the object appears only when the upload is
  completed, and s3transfer aborts the upload on any failure.
"""

from __future__ import annotations

import io
from typing import Any

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

# Part size (S3 allows 5 MiB and up; the last part may be shorter).
PART_BYTES = 8 * 1024 * 1024
# Parts held in memory by s3transfer (its default, 10, is 80 MB).
PARTS_IN_MEMORY = 1


def transfer_config() -> TransferConfig:
    # One part at a time, on the calling thread: the upload's memory is one
    # part whatever the image size (threads would each keep a malloc arena).
    config = TransferConfig(multipart_threshold=PART_BYTES, multipart_chunksize=PART_BYTES, use_threads=False)
    # Not a constructor argument of boto3's TransferConfig, but an attribute s3transfer reads.
    config.max_in_memory_upload_chunks = PARTS_IN_MEMORY
    return config


def storage_config(
    *,
    bucket: str,
    endpoint_url: str = "",
    region: str = "",
    access_key: str = "",
    secret_key: str = "",
    key_prefix: str = "",
    addressing_style: str = "auto",
) -> dict[str, Any]:
    """The STORAGES entry for `StreamingS3Storage` (settings validate the values first)."""
    options: dict[str, Any] = {
        "bucket_name": bucket,
        "endpoint_url": endpoint_url or None,
        "region_name": region or None,
        "access_key": access_key or None,
        "secret_key": secret_key or None,
        "location": key_prefix.strip("/"),
        "addressing_style": addressing_style,
        # Keys are fresh uuids: no existence check (one request) before each upload.
        "file_overwrite": True,
        "default_acl": None,
        # Reads through storage.open() spool to disk past 1 MiB (the image endpoints stream instead).
        "max_memory_size": 1024 * 1024,
        "transfer_config": transfer_config(),
    }
    return {"BACKEND": "catalog.s3.StreamingS3Storage", "OPTIONS": options}


class ObjectStream(io.RawIOBase):
    """A read-only stream over one GET response body; `size` is the object's length."""

    def __init__(self, body: Any, size: int) -> None:
        self._body = body
        self.size = size

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._body.read(len(target))
        target[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._body.close()
        super().close()


class StreamingS3Storage(S3Storage):
    def open_stream(self, name: str, byte_range: tuple[int, int] | None = None) -> ObjectStream:
        """The stored object (bytes `byte_range`, first and last inclusive, when given) as a stream;
        FileNotFoundError when there is none."""
        key = self._normalize_name(clean_name(name))
        extra = {"Range": f"bytes={byte_range[0]}-{byte_range[1]}"} if byte_range is not None else {}
        try:
            response = self.bucket.Object(key).get(**extra)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404", "NotFound"}:
                raise FileNotFoundError(f"no stored object {name!r}") from exc
            raise
        return ObjectStream(response["Body"], int(response["ContentLength"]))
