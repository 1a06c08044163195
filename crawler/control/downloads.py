"""Switching a source's download policy (crawler.download_policy), for the CLI, the admin and the API alike.

`followed` → `all` queues every chapter not downloaded yet, lowest chapter
number first; `all` → `followed` withdraws the pending downloads of mangas
nobody bookmarked (their chapters go back to `new`: not wanted) and queues
nothing more for them. Stored pages stay either way: a policy decides what is
fetched next, never what is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from catalog.models import Chapter, Source
from crawler import download_policy
from crawler.control import audit
from crawler.control.errors import ControlError
from crawler.passes.chapters import enqueue_chapter_content
from crawler.payloads import SyncChapterContent
from jobs import housekeeping
from jobs.models import Job

# Chapters handed to the queue per batch when a source switches to `all`.
ENQUEUE_BATCH = 5000


@dataclass(frozen=True)
class PolicySwitch:
    source_id: str
    before: str
    after: str
    enqueued: int
    withdrawn: int


def set_download_policy(*, actor: Any, source_id: str, policy: str) -> PolicySwitch:
    """Store `policy` for the source, then queue or withdraw what the switch concerns; audited.

    A bad policy or an unknown source raises before anything changes
    (SourceSettingsError / ControlError, each naming the source).
    """
    download_policy.check(source_id, policy)
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(id=source_id).first()
        if source is None:
            raise ControlError(f"source {source_id!r} does not exist")
        before = download_policy.policy_of(source)
        source.settings = {**(source.settings or {}), download_policy.KEY: policy}
        source.save(update_fields=["settings", "updated_at"])
        switch = apply_switch(source, before, policy)
        audit.record(
            actor,
            "set_download_policy",
            scope="source",
            target_id=source.id,
            detail={"before": before, "after": policy, "enqueued": switch.enqueued, "withdrawn": switch.withdrawn},
        )
    return switch


def apply_switch(source: Source, before: str, after: str) -> PolicySwitch:
    """Queue or withdraw downloads for a source whose policy went from `before` to `after` (already stored)."""
    enqueued = withdrawn = 0
    chapters = Chapter.objects.filter(source=source)
    if before != after and after == download_policy.ALL:
        enqueued = enqueue_waiting(chapters)
    elif before != after and after == download_policy.FOLLOWED:
        withdrawn = withdraw_unfollowed(chapters)
    return PolicySwitch(source.id, before, after, enqueued, withdrawn)


def enqueue_waiting(chapters: Any) -> int:
    """Queue the live chapters never downloaded (`new`, or `queued` without a job), in batches; how many inserted."""
    waiting = (
        chapters.filter(dropped_at__isnull=True, sync_state__in=[Chapter.SyncState.NEW, Chapter.SyncState.QUEUED])
        .order_by("manga_id", "number", "created_at")
        .iterator(chunk_size=ENQUEUE_BATCH)
    )
    inserted, batch = 0, []
    for chapter in waiting:
        batch.append(chapter)
        if len(batch) == ENQUEUE_BATCH:
            inserted += enqueue_chapter_content(batch)
            batch = []
    return inserted + enqueue_chapter_content(batch)


def withdraw_unfollowed(chapters: Any) -> int:
    """Withdraw the pending downloads of chapters whose manga nobody follows; they become `new` (not wanted)."""
    unwanted = download_policy.not_followed(chapters).values("id")
    jobs = Job.objects.filter(kind=SyncChapterContent.kind, chapter_id__in=unwanted)
    withdrawn = housekeeping.withdraw_pending(jobs)
    for start in range(0, len(withdrawn), ENQUEUE_BATCH):  # bounded statements: a big site withdraws a million
        Chapter.objects.filter(
            id__in=withdrawn[start : start + ENQUEUE_BATCH], sync_state=Chapter.SyncState.QUEUED
        ).update(sync_state=Chapter.SyncState.NEW, updated_at=timezone.now())
    return len(withdrawn)
