"""Where each user is told things (their Apprise URLs), what became readable, what was sent, what is unhealthy."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class NotificationTarget(models.Model):
    """One Apprise URL of a user's (ntfy, Gotify, Discord, email, a JSON webhook...).

    The URL carries the service's secret (a token, a password), so it is
    stored whole to send and shown only masked (`notify.targets.masked`).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_targets")
    label = models.CharField(max_length=100, blank=True)
    url = models.TextField()
    # The URL's scheme (`json`, `ntfys`, `discord`...): what dead letters and logs may name instead of the URL.
    scheme = models.CharField(max_length=32)
    # Chapter digests of the user's bookmarked series.
    digests = models.BooleanField(default=True)
    # Source health alerts: operators only (`notify.targets.may_receive_health_alerts`).
    health_alerts = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.user_id} {self.scheme}://"


class DigestPass(models.Model):
    """One run of the digest collector: the chapters it claimed are in exactly this pass."""

    started_at = models.DateTimeField(auto_now_add=True)
    chapters = models.PositiveIntegerField(default=0)
    digests = models.PositiveIntegerField(default=0)


class ReadyChapter(models.Model):
    """A chapter that became readable (every page stored), waiting for the next digest pass to claim it."""

    chapter = models.ForeignKey("catalog.Chapter", on_delete=models.CASCADE, related_name="+")
    ready_at = models.DateTimeField()
    digest_pass = models.ForeignKey(DigestPass, null=True, blank=True, on_delete=models.SET_NULL, related_name="ready")

    class Meta:
        indexes = [
            # The digest pass's claim (`notify.digests.passes.claim_ready`): the rows no pass took yet.
            models.Index(fields=["id"], name="notify_ready_unclaimed_idx", condition=Q(digest_pass__isnull=True)),
        ]


class Delivery(models.Model):
    """One message to one target: what the `notify_send` job sends (the job's payload names only this row)."""

    class Kind(models.TextChoices):
        DIGEST = "digest"
        TEST = "test"
        HEALTH = "health"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    target = models.ForeignKey(NotificationTarget, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    title = models.CharField(max_length=250)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)


class HealthCondition(models.Model):
    """A source health condition that holds now (a row per condition while it lasts; deleted when it clears).

    Alerts fire when a row is created, so a condition is announced once while
    it lasts and again only after it cleared and came back.
    """

    key = models.CharField(max_length=200, unique=True)
    message = models.TextField()
    since = models.DateTimeField()
