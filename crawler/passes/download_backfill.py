"""Queueing a source's waiting chapters after it switched to `all`: the `enqueue_downloads` job's work.

A big source switched from `followed` to `all` has a million chapters to
queue; doing it inside the operator's request held the request (and a
transaction) for minutes. The switch queues one `enqueue_downloads` job, and
the job queues the chapters never downloaded, by manga and lowest chapter
number first, BATCH at a time. After each batch it keeps the last chapter's
sort keys in the state store, so a job that was cancelled, failed or whose
worker died resumes after what it already queued. Each switch to `all`
gets its own token (kept in the state store and carried by its job), so a
new switch always queues a new job, which walks from the first chapter, and
an older job still running stops at its next batch: no switch can find its
job about to finish and be lost. It also stops as soon as the source is no
longer `all` (switched back: nothing more is queued); the
handler (crawler.workers.handlers) audits what it queued once it has walked
every chapter.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from catalog.api.seek import after, order_of
from catalog.models import Chapter, Source
from crawler import download_policy, state_store
from crawler.models import CrawlerState
from crawler.passes.chapters import enqueue_chapter_content
from jobs.errors import JobCancelled

BATCH = 5000

# The walk's order, ending in the primary key so the cursor never skips or repeats a chapter.
ORDER = (("manga_id", False), ("number", False), ("created_at", False), ("id", False))
_DECODE: tuple[Callable[[str], Any], ...] = (uuid.UUID, Decimal, dt.datetime.fromisoformat, uuid.UUID)


def _switch_key(source_id: str) -> str:
    return f"downloads:{source_id}:switch"


def cursor_key(source_id: str, switch: str) -> str:
    return f"downloads:{source_id}:enqueue_cursor:{switch}"


def start_switch(source_id: str) -> str:
    """A new switch to `all`: its token (for its job's payload); older jobs and their cursors are superseded."""
    forget_progress(source_id)
    token = uuid.uuid4().hex
    state_store.set_state(_switch_key(source_id), token)
    return token


def forget_progress(source_id: str) -> None:
    """Drop every saved cursor of the source: whatever job walks next starts from the first chapter."""
    CrawlerState.objects.filter(key__startswith=f"downloads:{source_id}:enqueue_cursor:").delete()


def waiting(source_id: str) -> QuerySet[Chapter]:
    """The source's live chapters never downloaded (`new`, or `queued` with or without a job), in walk order."""
    return Chapter.objects.filter(
        source_id=source_id,
        dropped_at__isnull=True,
        sync_state__in=[Chapter.SyncState.NEW, Chapter.SyncState.QUEUED],
    ).order_by(*order_of(ORDER))


def _cursor_of(chapter: Chapter) -> list[str]:
    return [
        str(getattr(chapter, name)) if name != "created_at" else chapter.created_at.isoformat() for name, _ in ORDER
    ]


def _still_wanted(source_id: str, switch: str) -> bool:
    """The source is still `all`, and `switch` (when given) is still its latest switch to `all`."""
    source = Source.objects.filter(id=source_id).only("settings").first()
    if source is None or download_policy.policy_of(source) != download_policy.ALL:
        return False
    return not switch or state_store.get_state(_switch_key(source_id)) == switch


def run_backfill(
    source_id: str,
    switch: str = "",
    *,
    cancel: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> int | None:
    """Queue the source's waiting chapters from the saved cursor on; how many jobs it inserted, None if it stopped.

    Stops (None, nothing more queued) when the source is gone, no longer
    `all`, or switched to `all` again since `switch` (a newer job walks);
    raises JobCancelled between batches when `cancel` is set, the cursor
    kept for the retry (a batch queued twice is harmless: the queue skips
    chapters already in flight).
    """
    key = cursor_key(source_id, switch)
    inserted = 0
    while True:
        if not _still_wanted(source_id, switch):
            CrawlerState.objects.filter(key=key).delete()
            return None
        if cancel is not None and cancel.is_set():
            raise JobCancelled(f"queueing the downloads of {source_id} cancelled after {inserted} chapter(s)")
        saved = state_store.get_state(key)
        chapters = waiting(source_id)
        if saved:
            chapters = chapters.filter(after(ORDER, [parse(v) for parse, v in zip(_DECODE, saved, strict=True)]))
        batch = list(chapters[:BATCH])
        if not batch:
            break
        inserted += enqueue_chapter_content(batch)
        state_store.set_state(key, _cursor_of(batch[-1]))
        if progress is not None:
            progress(inserted)
    CrawlerState.objects.filter(key=key).delete()
    return inserted
