"""Per-page AI analysis results."""

import uuid

from django.db import models


class PageAnalysis(models.Model):
    class State(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    page = models.OneToOneField("catalog.Page", on_delete=models.CASCADE, related_name="analysis")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    ocr_text = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    scene_description = models.TextField(blank=True)
    nsfw = models.BooleanField(null=True, blank=True)
    nsfw_score = models.FloatField(null=True, blank=True)
    backend = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    # Written only by a successful analysis (the record_duration gate): a
    # failed retry of a force re-analysis keeps the last good figure.
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    analyzed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "page analyses"

    def __str__(self) -> str:
        return f"analysis of {self.page_id} [{self.state}]"
