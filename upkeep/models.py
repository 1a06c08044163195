"""The verify pass's report: one `VerifyRun` per pass (its cursor lets it resume), one `VerifyFinding` per problem."""

from __future__ import annotations

from django.db import models


class VerifyRun(models.Model):
    """One pass over the library. `finished_at` empty: the pass stopped before the end and resumes at `cursor`."""

    class Phase(models.TextChoices):
        PAGES = "pages", "Stored pages"
        ORPHANS = "orphans", "Files nothing names"
        CHAPTERS = "chapters", "Chapter gaps and exports"
        DONE = "done", "Done"

    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    storage = models.CharField(max_length=16)  # "filesystem" or "s3": a resume on another backend starts over
    full = models.BooleanField(default=False)  # every page's bytes hashed, not a sample
    sample_pages = models.PositiveIntegerField(default=0)
    export_dir = models.CharField(max_length=1000, blank=True)
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.PAGES)
    # Where the current phase stopped: {"chapter": id, "index": n} / {"key": name} / {"manga": id}.
    cursor = models.JSONField(default=dict, blank=True)
    # Rows and files walked and problems found, by name (upkeep.verify.run.COUNTERS).
    counts = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            # The dashboard's latest report and the resume of an unfinished pass: newest first.
            models.Index(fields=["-started_at", "-id"], name="verify_run_latest_idx"),
        ]

    def __str__(self) -> str:
        return f"verify #{self.pk} ({self.phase})"


class VerifyFinding(models.Model):
    class Kind(models.TextChoices):
        MISSING = "missing", "Page file missing"
        CORRUPT = "corrupt", "Page bytes do not match their sha256"
        ORPHAN = "orphan", "File nothing names (no page, cover, or original of a copy)"
        GAP = "gap", "Listed chapter not downloaded between stored ones"
        STALE = "stale", "Export older than its chapter"

    run = models.ForeignKey(VerifyRun, on_delete=models.CASCADE, related_name="findings")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    source_id = models.CharField(max_length=64, blank=True)
    # Plain ids, not foreign keys: a finding outlives the row it names (a repair deletes pages, a source drops a chapter).
    manga_id = models.UUIDField(null=True, blank=True)
    chapter_id = models.UUIDField(null=True, blank=True)
    page_id = models.UUIDField(null=True, blank=True)
    name = models.CharField(max_length=1000, blank=True)  # the storage key or the export file
    detail = models.CharField(max_length=300, blank=True)
    repaired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The repairs walk one kind of a run's open findings in id order (upkeep.verify.repairs).
            models.Index(
                fields=["run", "kind", "id"], name="verify_finding_kind_idx", condition=models.Q(repaired_at=None)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.name or self.chapter_id}"
