"""Stored files under a prefix, in key order, from a cursor on: the same walk on the local disk and on S3.

S3 lists keys in order itself (ListObjectsV2 with StartAfter), a thousand
at a time. A directory on disk has no order and may hold a million chapter
folders, so the walk takes the next `DIRECTORY_BATCH` names after the
cursor with a bounded heap on each scan of the folder: memory stays that
many names whatever the library's size, at the price of one scan of the
folder per batch.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator

from django.core.files.storage import FileSystemStorage, Storage

DIRECTORY_BATCH = 5000
LIST_PAGE = 1000


def storage_kind(storage: Storage) -> str:
    return "filesystem" if isinstance(storage, FileSystemStorage) else "s3"


def stored_keys(storage: Storage, prefix: str, start_after: str = "") -> Iterator[tuple[str, float]]:
    """(key, modified epoch seconds) of every file under `prefix`/, in key order, keys after `start_after` only."""
    if isinstance(storage, FileSystemStorage):
        yield from _local_keys(storage, prefix, start_after)
    else:
        yield from _s3_keys(storage, prefix, start_after)


def _local_keys(storage: FileSystemStorage, prefix: str, start_after: str) -> Iterator[tuple[str, float]]:
    root = storage.path(prefix)
    if not os.path.isdir(root):
        return
    # The cursor's first segment below the prefix: that entry may be half done, later ones are untouched.
    resume = start_after[len(prefix) + 1 :].split("/", 1)[0] if start_after.startswith(prefix + "/") else ""
    last = resume
    first = True
    while True:
        names = _next_names(root, last, include=first and bool(resume))
        first = False
        if not names:
            return
        for name in names:
            path = os.path.join(root, name)
            key = f"{prefix}/{name}"
            if os.path.isdir(path):
                files = sorted(os.scandir(path), key=lambda e: e.name)
                for entry in files:
                    child = f"{key}/{entry.name}"
                    if child > start_after and entry.is_file(follow_symlinks=False):
                        yield child, entry.stat(follow_symlinks=False).st_mtime
            elif key > start_after:
                try:
                    yield key, os.stat(path).st_mtime
                except FileNotFoundError:
                    continue
        last = names[-1]


def _next_names(root: str, after: str, *, include: bool) -> list[str]:
    with os.scandir(root) as entries:
        names = (e.name for e in entries if e.name > after or (include and e.name == after))
        return heapq.nsmallest(DIRECTORY_BATCH, names)


def _s3_keys(storage: Storage, prefix: str, start_after: str) -> Iterator[tuple[str, float]]:
    location = (getattr(storage, "location", "") or "").strip("/")
    base = f"{location}/" if location else ""
    client = storage.connection.meta.client  # type: ignore[attr-defined]
    arguments = {
        "Bucket": storage.bucket_name,
        "Prefix": f"{base}{prefix}/",
        "PaginationConfig": {"PageSize": LIST_PAGE},
    }  # type: ignore[attr-defined]
    if start_after:
        arguments["StartAfter"] = f"{base}{start_after}"
    for page in client.get_paginator("list_objects_v2").paginate(**arguments):
        for item in page.get("Contents", []):
            yield item["Key"][len(base) :], item["LastModified"].timestamp()
