"""Handing the bytes to nginx: `X-Accel-Redirect` to the stored file, after the view's permission check.

Behind nginx, `SERVE_ACCEL_REDIRECT=/protected/` makes an image answer an
empty response naming `/protected/<storage name>`; nginx serves that
internal location from MEDIA_ROOT itself (sendfile, its own byte ranges),
so the web process does one permission check and no file I/O. Off (empty)
by default: without such a location the client would get an empty body.

Only local storage is handed over. An S3-compatible storage keeps streaming
through the web process: a presigned URL would be a bearer link that any
cache or log on the way keeps, readable by whoever holds it until it
expires, which the per-request permission check is there to prevent.
"""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings
from django.core.files.storage import FileSystemStorage, Storage, default_storage


def accel_location(name: str, prefix: str, storage: Storage) -> str:
    """The internal location nginx serves `name` from, or "" when the bytes are not handed over. Pure."""
    if not prefix or not isinstance(storage, FileSystemStorage):
        return ""
    return prefix.rstrip("/") + "/" + quote(name.lstrip("/"))


def configured_location(name: str) -> str:
    return accel_location(name, settings.SERVE_ACCEL_REDIRECT, default_storage)
