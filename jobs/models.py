"""The job engine's tables: the queue (`crawler_jobs`) and each worker process's status row.

Only `jobs.queue` writes `Job.state` and the lease columns. The tables keep
the names they had when they lived in the crawler app, so an existing
database moves over without a copy (migrations 0001/0002 are state-only).
"""

import uuid

from django.db import models
from django.db.models import Q


class JobState(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    DEAD = "dead"


IN_FLIGHT_STATES = (JobState.PENDING, JobState.RUNNING)


def _catalog_ref(to: str) -> models.ForeignKey:
    """A job's optional reference to a catalog row: no constraint, no index of its own (Job.Meta indexes it where set)."""
    return models.ForeignKey(
        to,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )


class Job(models.Model):
    """One unit of queued work: a kind-tagged JSON payload with lease bookkeeping.

    `lease_generation` is bumped by every lease, release and reclaim, so a
    lease's identity is `(id, lease_generation)`: a late ack from a lease that
    was released or expired finds no row and steps aside.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=40)
    payload = models.JSONField()
    state = models.CharField(max_length=10, choices=JobState.choices, default=JobState.PENDING)
    attempts = models.IntegerField(default=0)
    max_attempts = models.IntegerField(default=5)
    # Times a source said "come back later" (Retry-After) for this job; bounded
    # by JOBS_MAX_DEFERRALS so a source that always says it still dead-letters.
    deferrals = models.IntegerField(default=0, db_default=0)
    lease_generation = models.BigIntegerField(default=0)
    leased_until = models.DateTimeField(null=True, blank=True)
    scheduled_at = models.DateTimeField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    last_error = models.TextField(blank=True, default="")
    # One in-flight job per key: the partial unique constraint below makes
    # `enqueue` race-free without a check-then-insert.
    dedup_key = models.CharField(max_length=200, null=True, blank=True)
    # Denormalised from the payload when it names one, so admin lists can
    # label and search jobs by manga title and requeue by manga/chapter.
    # No database constraint: a job may outlive (or precede) its row. Indexed
    # only where set (Meta.indexes).
    # The payload's source ("" for kinds that have none), as a column so a lease that leaves out cooling
    # or paused sources, or asks for some kinds, walks only the eligible rows (crawler_jobs_source_lease_idx).
    source_id = models.CharField(max_length=100, default="", db_default="", blank=True)
    manga = _catalog_ref("catalog.Manga")
    chapter = _catalog_ref("catalog.Chapter")
    page = _catalog_ref("catalog.Page")

    class Meta:
        db_table = "crawler_jobs"
        constraints = [
            models.UniqueConstraint(
                fields=["dedup_key"],
                condition=Q(state__in=["pending", "running"]),
                name="crawler_jobs_inflight_dedup",
            ),
        ]
        indexes = [
            # Used by jobs.queue.lease: candidates in (scheduled_at, created_at) order.
            models.Index(
                fields=["scheduled_at", "created_at"],
                name="crawler_jobs_leasable_idx",
                condition=Q(state__in=["pending", "running"]),
            ),
            # Used by the dashboard's dead-jobs list (console.api dead-jobs), newest first.
            # The id breaks ties so a keyset page (catalog.api.seek) starts exactly after the previous one.
            # Used by queue.lease when it leaves sources out or picks kinds: one ordered walk per
            # (source, kind) group, found by skipping through the index's leading columns.
            models.Index(
                fields=["source_id", "kind", "scheduled_at", "created_at"],
                name="crawler_jobs_source_lease_idx",
                condition=Q(state__in=["pending", "running"]),
            ),
            models.Index(fields=["-updated_at", "-id"], name="crawler_jobs_dead_idx", condition=Q(state="dead")),
            # Every lease and ack writes a new row version and so an entry in
            # each index whose condition it meets: the indexes below leave out
            # what no query asks for (done rows, unset references), five index
            # entries fewer per job.
            # Used by the status counts and reconcile (pending, running, dead per kind).
            models.Index(
                fields=["state", "kind"],
                name="crawler_jobs_counted_idx",
                condition=Q(state__in=["pending", "running", "dead"]),
            ),
            # Used by the job history (newest change first, keyset-paged: id breaks ties).
            models.Index(fields=["-updated_at", "-id"], name="crawler_jobs_updated_idx"),
            # Requeue by manga, chapter or page (jobs.requeue.dead_jobs_in_scope) and the admin's labels.
            models.Index(fields=["manga"], name="crawler_jobs_manga_idx", condition=Q(manga__isnull=False)),
            models.Index(fields=["chapter"], name="crawler_jobs_chapter_idx", condition=Q(chapter__isnull=False)),
            models.Index(fields=["page"], name="crawler_jobs_page_idx", condition=Q(page__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id} [{self.state}]"


class WorkerStatus(models.Model):
    """Live status of one worker process, heartbeated; a stale heartbeat means gone."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    role = models.CharField(max_length=32)
    host = models.CharField(max_length=255)
    pid = models.IntegerField()
    kinds = models.JSONField(default=list)
    worker_count = models.IntegerField(default=1)
    phase = models.JSONField(default=dict)
    active_chapters = models.JSONField(default=list)
    current_cover = models.JSONField(null=True, blank=True)
    flags = models.JSONField(default=dict)
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(db_index=True)
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "crawler_worker_status"
        verbose_name_plural = "worker statuses"

    def __str__(self) -> str:
        return f"{self.role}@{self.host}:{self.pid}"
