"""Which chapter a KOReader document id names: recorded as CBZs are served, looked up on sync."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from catalog.models import Chapter
from reader.kosync.digest import PartialMD5, filename_digest
from reader.models import DocumentDigest


def remember(digest: str, chapter: Chapter, method: str) -> None:
    # A digest names one file; if two chapters ever share one (two sources'
    # copies of a title with the same file name), the last one served wins.
    DocumentDigest.objects.update_or_create(digest=digest, defaults={"chapter": chapter, "method": method})


def remember_filename(filename: str, chapter: Chapter) -> None:
    remember(filename_digest(filename), chapter, DocumentDigest.Method.FILENAME)


def recording_binary_digest(chunks: Iterable[bytes], chapter: Chapter) -> Iterator[bytes]:
    """Pass the CBZ's chunks through; once the last one went out, remember the file's partial MD5.

    A download cut short records nothing: its digest would name no file.
    """
    digest = PartialMD5()
    for chunk in chunks:
        digest.update(chunk)
        yield chunk
    remember(digest.hexdigest(), chapter, DocumentDigest.Method.BINARY)


_MD5_HEX = re.compile(r"[0-9a-fA-F]{32}")


def is_md5_hex(value: str) -> bool:
    """True for what KOReader sends as a document id (either digest method) and as its key: an MD5 in hex."""
    return bool(_MD5_HEX.fullmatch(value))


def chapter_for(digest: str) -> Chapter | None:
    row = DocumentDigest.objects.select_related("chapter").filter(digest=digest.lower()).first()
    if row is None or row.chapter.dropped_at is not None:
        return None
    return row.chapter
