"""The crawler's job payloads: syncing mangas and chapters, downloading chapters, running passes.

Registered as kinds of the "crawl" worker role from `CrawlerConfig.ready()`
(`crawler.workers.roles.CRAWL_KINDS`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar

from jobs.payloads import Payload


@dataclass(frozen=True)
class SyncManga(Payload):
    """Fetch one manga's detail page, upsert metadata, sync its chapter list.

    `url` and `title` come from the list ref so the worker can rebuild it
    without re-walking and the dead-jobs UI can label a manga that has no row
    yet (rows enqueued before they existed got them in jobs migration 0006).
    """

    kind: ClassVar[str] = "sync_manga"
    source_id: str
    source_manga_key: str
    url: str
    title: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}:{self.source_manga_key}"


@dataclass(frozen=True)
class SyncChapterList(Payload):
    """Diff the chapter list, enqueue content jobs for new chapters, soft-drop vanished ones."""

    kind: ClassVar[str] = "sync_chapter_list"
    source_id: str
    manga_id: uuid.UUID
    source_manga_key: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.manga_id}"


@dataclass(frozen=True)
class SyncChapterContent(Payload):
    """Download one chapter's page images into storage."""

    kind: ClassVar[str] = "sync_chapter_content"
    source_id: str
    chapter_id: uuid.UUID
    source_chapter_key: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.chapter_id}"


@dataclass(frozen=True)
class SourceWide(Payload):
    """A job over a whole source: one in flight per source and kind."""

    kind: ClassVar[str] = ""
    source_id: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}"


@dataclass(frozen=True)
class MetadataPass(SourceWide):
    """Run a newest-first metadata pass over one source (one in flight per source)."""

    kind: ClassVar[str] = "metadata_pass"


@dataclass(frozen=True)
class Reconcile(SourceWide):
    """Run a list-only reconcile pass over one source (one in flight per source)."""

    kind: ClassVar[str] = "reconcile"


@dataclass(frozen=True)
class EnqueueDownloads(SourceWide):
    """Queue every waiting chapter of a source switched to `all`, in batches: one job per switch.

    `switch` is the switch's token (crawler.passes.download_backfill): a
    later switch makes a new job, and this one stops at its next batch.
    """

    kind: ClassVar[str] = "enqueue_downloads"
    switch: str = ""

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}:{self.switch}"
