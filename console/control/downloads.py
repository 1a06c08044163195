"""What switching a source's download policy (crawler.download_policy) queues or withdraws.

The switch itself is a change of the source's settings, made through
`console.control.source_changes` (`set_download_policy`, `change_source`):
operator-checked and audited whatever the door.

`followed` → `all` queues one `enqueue_downloads` job, which queues every
chapter not downloaded yet, lowest chapter number first, in batches and
resumably (crawler.passes.download_backfill): a million chapters never ride
on the operator's request. `all` → `followed` withdraws the pending downloads of mangas
nobody bookmarked (their chapters go back to `new`: not wanted) and queues
nothing more for them. Stored pages stay either way: a policy decides what is
fetched next, never what is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from catalog.models import Chapter, Source
from crawler import download_policy
from crawler.passes import download_backfill
from crawler.payloads import EnqueueDownloads, SyncChapterContent
from jobs import housekeeping, queue
from jobs.models import Job

# Withdrawn chapters marked `new` per statement when a source switches to `followed`.
WITHDRAW_BATCH = 5000


@dataclass(frozen=True)
class PolicySwitch:
    source_id: str
    before: str
    after: str
    withdrawn: int
    # The `enqueue_downloads` job that queues the chapters of a switch to `all` (None for any other switch).
    enqueue_job: str | None = None

    def describe(self) -> str:
        """One line for the operator: what the switch did."""
        if self.enqueue_job:
            done = f"job {self.enqueue_job} queues the chapters not downloaded yet, lowest number first"
        else:
            done = f"withdrew {self.withdrawn} pending download(s)"
        return f"{self.source_id}: download {self.before} -> {self.after}; {done}"


def apply_switch(source: Source, before: str, after: str) -> PolicySwitch:
    """Queue the job that queues downloads, or withdraw them, for a source whose policy went from `before` to `after`.

    The job queues the chapters and audits how many; `enqueue_job` names it.
    """
    if before != after and after == download_policy.ALL:
        job = queue.enqueue(EnqueueDownloads(source_id=source.id, switch=download_backfill.start_switch(source.id)))
        return PolicySwitch(source.id, before, after, 0, enqueue_job=str(job.id))
    withdrawn = 0
    if before != after and after == download_policy.FOLLOWED:
        withdrawn = withdraw_unfollowed(Chapter.objects.filter(source=source))
    return PolicySwitch(source.id, before, after, withdrawn)


def withdraw_unfollowed(chapters: Any) -> int:
    """Withdraw the pending downloads of chapters whose manga nobody follows; they become `new` (not wanted)."""
    unwanted = download_policy.not_followed(chapters).values("id")
    jobs = Job.objects.filter(kind=SyncChapterContent.kind, chapter_id__in=unwanted)
    withdrawn = housekeeping.withdraw_pending(jobs)
    for start in range(0, len(withdrawn), WITHDRAW_BATCH):  # bounded statements: a big site withdraws a million
        Chapter.objects.filter(
            id__in=withdrawn[start : start + WITHDRAW_BATCH], sync_state=Chapter.SyncState.QUEUED
        ).update(sync_state=Chapter.SyncState.NEW, updated_at=timezone.now())
    return len(withdrawn)
