"""Crawler tables: durable crawler state, the audit log, source throttles and slots.

The job queue and worker status rows live in the `jobs` app.
"""

import uuid

from django.conf import settings
from django.db import models


class CrawlerState(models.Model):
    """Durable key/value state: recovery flags, last-pass summaries, runtime session, control requests."""

    key = models.CharField(max_length=200, primary_key=True)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "crawler_state"
        # Checked by console.control.operators for every control (API, dashboard, admin actions).
        permissions = [("operate_crawler", "Can operate the crawler (passes, requeues, sessions)")]

    def __str__(self) -> str:
        return self.key


class AuditEvent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=64)
    scope = models.CharField(max_length=32, blank=True)
    target_id = models.CharField(max_length=200, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "crawler_audit"
        ordering = ["-created_at"]
        indexes = [
            # The dashboard reads one action's rows, newest first (the series failovers).
            models.Index(fields=["action", "-created_at"], name="crawler_audit_action_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.scope} {self.target_id}"


class SourceThrottle(models.Model):
    """One source's shared token bucket and cooldown, read and written by every worker on every host.

    `crawler.politeness.limiter` is its only writer: each request locks the row
    (`SELECT ... FOR UPDATE`) in one short transaction, refills the bucket from
    `refilled_at` by the source's rate, and takes a token. No session state is
    involved, so it holds behind PgBouncer's transaction pooling.
    """

    source_id = models.CharField(max_length=100, primary_key=True)
    tokens = models.FloatField(default=0.0)
    # None: never used, the bucket is full.
    refilled_at = models.DateTimeField(null=True, blank=True)
    # Set from a 429/503 Retry-After: nobody requests the source before this.
    cooling_until = models.DateTimeField(null=True, blank=True)
    cooling_reason = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "crawler_source_throttle"
        indexes = [
            # Used by limiter.cooling_sources (each worker, once a second) and the dashboard's cooling list.
            models.Index(fields=["cooling_until"], name="crawler_throttle_cooling_idx"),
        ]

    def __str__(self) -> str:
        return self.source_id


class SourceSlot(models.Model):
    """One request of a source in flight (its `max_concurrency` counts these rows).

    A slot expires on its own at `expires_at` (kept alive while an image
    streams), so a worker killed mid-request never holds a slot for good.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source_id = models.CharField(max_length=100)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "crawler_source_slot"
        indexes = [
            # Used by the limiter's in-flight count for one source.
            models.Index(fields=["source_id", "expires_at"], name="crawler_slot_source_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} until {self.expires_at}"


class SourceClearance(models.Model):
    """One source's pass of a JavaScript challenge: the clearance cookies and the User-Agent they are bound to.

    Every worker on every host sends these with the source's plain requests
    (pages over httpx, images over libcurl) until `expires_at` or until the
    site challenges again, so one pass serves them all. `crawler.clearance.rows`
    is its only reader and writer; a pass is claimed by a compare-and-set on
    `pass_started_at` under a row lock, so concurrent workers wait for the
    pass in flight instead of each launching one, and `last_attempt_at`
    spaces passes by CRAWLER_CHALLENGE_PASS_INTERVAL_SECS.

    `cookies` holds secrets (a clearance cookie is as good as a session):
    never logged, never rendered; the dashboard shows names and expiry only.
    """

    source_id = models.CharField(max_length=100, primary_key=True)
    # Bumped by every stored pass: an adapter that loaded generation N and is challenged knows a newer
    # pass (N+1, by another worker) is worth retrying with before asking for one of its own.
    generation = models.IntegerField(default=0)
    cookies = models.JSONField(default=list, blank=True)  # [{name, value, domain, path, expires}]
    user_agent = models.TextField(blank=True, default="")
    via = models.CharField(max_length=16, blank=True, default="")  # "browser" or "solver"
    expires_at = models.DateTimeField(null=True, blank=True)  # None: session cookies, kept until challenged again
    passed_at = models.DateTimeField(null=True, blank=True)
    passes = models.IntegerField(default=0)
    # The pass in flight (None: none); a pass older than its timeout is taken over.
    pass_started_at = models.DateTimeField(null=True, blank=True)
    pass_owner = models.CharField(max_length=100, blank=True, default="")
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_failure = models.TextField(blank=True, default="")
    last_failure_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "crawler_source_clearance"

    def __str__(self) -> str:
        return self.source_id
