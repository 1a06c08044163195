"""The library: sources, mangas, chapters, stored pages and bookmarks."""

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import ExpressionWrapper, F, Q

from catalog import chapter_numbers
from catalog.source_settings import SourceSettingsError, validate_settings


class Source(models.Model):
    """A site we crawl. `kind` picks the adapter; `settings` configures it."""

    class Kind(models.TextChoices):
        DEMO = "demo", "Built-in demo site"
        HTML = "html", "Selector-configured HTML site"
        MANGADEX = "mangadex", "MangaDex (its public API)"
        SUWAYOMI = "suwayomi", "A source of a Suwayomi-Server (Mihon extensions)"

    id = models.SlugField(primary_key=True, max_length=64)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.HTML)
    base_url = models.URLField(max_length=500)
    enabled = models.BooleanField(default=True)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """Every app's settings keys, checked in one place (catalog.source_settings)."""
        try:
            validate_settings(self.id, self.kind, self.settings)
        except SourceSettingsError as exc:
            raise ValidationError({"settings": str(exc)}) from exc


class Tag(models.Model):
    name = models.CharField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.name


# "Latest chapter first, never-updated last" as index-matchable expressions.
LATEST_CHAPTER_ORDER = (
    ExpressionWrapper(Q(latest_chapter_at__isnull=True), output_field=models.BooleanField()).asc(),
    F("latest_chapter_at").desc(),
    F("created_at").desc(),
    F("id").desc(),
)


class Series(models.Model):
    """One manga as readers know it, grouping the per-source `Manga` rows that copy it (docs/series.md).

    A series emptied by a merge is kept, pointing at the series that took its
    mangas, so the merge can be undone with every id as it was
    (catalog.series); readers list only series with `merged_into` unset.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    title = models.CharField(max_length=500)
    # Source ids, preferred first; sources it leaves out follow in the global order (SERIES_SOURCE_PRIORITY).
    source_order = models.JSONField(default=list, blank=True)
    merged_into = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="absorbed", db_index=False
    )
    # Download every source's copy of each chapter, not only the preferred one's (crawler.series_downloads).
    download_alternates = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "series"
        permissions = [("merge_series", "Can merge and split series")]
        indexes = [
            # The readers' series lists walk live series only (merged ones are kept for undo).
            models.Index(fields=["title", "id"], name="series_live_title_idx", condition=Q(merged_into__isnull=True)),
        ]

    def __str__(self) -> str:
        return self.title


class Manga(models.Model):
    class Status(models.TextChoices):
        ONGOING = "ongoing"
        COMPLETED = "completed"
        HIATUS = "hiatus"
        CANCELLED = "cancelled"
        UNKNOWN = "unknown"

    class CoverState(models.TextChoices):
        MISSING = "missing"
        STORED = "stored"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # A new manga is a series of its own until matching or an operator merges it (Manga.save).
    series = models.ForeignKey(Series, on_delete=models.PROTECT, related_name="mangas")
    # The one manga per series readers list and address the series by (catalog.series_leads).
    leads_series = models.BooleanField(default=False, db_default=False)
    title = models.CharField(max_length=500, db_index=True)
    alt_titles = models.JSONField(default=list, blank=True)
    description = models.TextField(blank=True)
    authors = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNKNOWN)
    tags = models.ManyToManyField(Tag, blank=True, related_name="mangas")
    cover = models.FileField(upload_to="covers/", blank=True, max_length=300)
    cover_url = models.URLField(max_length=1000, blank=True)
    cover_state = models.CharField(max_length=16, choices=CoverState.choices, default=CoverState.MISSING)
    # The stored cover's perceptual hash (16 hex digits, imagehash.phash), "" until computed: series matching.
    # The database default too: bulk SQL that predates series (bench/bigsite/seed.py) still inserts rows.
    cover_hash = models.CharField(max_length=16, blank=True, default="", db_default="")
    # Fingerprint of the source metadata last stored: lets the metadata pass
    # tell Unchanged from Updated without comparing every field by hand.
    metadata_hash = models.CharField(max_length=64, blank=True)
    # Denormalised so "ordered by latest chapter" is one index scan on a
    # 100k-manga library instead of an aggregate over every chapter.
    latest_chapter_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # Used by the library API's manga list (catalog.api.views.manga_list):
            # latest chapter first, never-updated mangas last. "IS NULL" leads
            # instead of DESC NULLS LAST because SQLite indexes cannot say
            # NULLS LAST; the list orders by exactly these expressions.
            models.Index(
                *LATEST_CHAPTER_ORDER,
                name="manga_latest_chapter_idx",
            ),
            # Used by the dashboard's "missing covers" backlog list
            # (console.control.backlog), newest first, keyset-paged (the id breaks ties).
            models.Index(
                fields=["-updated_at", "-id"],
                name="mangas_missing_cover_idx",
                condition=~Q(cover_state="stored"),
            ),
            # The readers' lists walk series leads only (catalog.series_leads): by latest chapter and by title,
            # so a deep page or a cursor is an index range over the leads, not a sort of every lead.
            models.Index(*LATEST_CHAPTER_ORDER, name="manga_lead_latest_idx", condition=Q(leads_series=True)),
            models.Index(fields=["title", "id"], name="manga_lead_title_idx", condition=Q(leads_series=True)),
        ]
        constraints = [
            # Readers list one entry per series: its lead (catalog.series_leads keeps exactly one per series).
            models.UniqueConstraint(
                fields=["series"], condition=Q(leads_series=True), name="manga_one_lead_per_series"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Every creation path (the metadata pass, the admin, factories) gets a series without knowing of series;
        # it takes the manga's id, as the migration that grouped existing libraries gave it.
        if self.series_id is None:
            self.series = Series.objects.create(id=self.id, title=self.title)
            self.leads_series = True
        elif self._state.adding and not self.leads_series:
            # Created straight into a series (a fixture, an import): it leads only a series that has no lead.
            self.leads_series = not Manga.objects.filter(series_id=self.series_id, leads_series=True).exists()
        super().save(*args, **kwargs)


class MangaMatchKey(models.Model):
    """What series matching compares, indexed: a normalised title or alternative title, or a band of the cover's hash.

    Candidates for a merge are mangas sharing a key (catalog.series_matching
    says what the keys are), so a pass over 100k mangas compares a few pairs
    instead of every pair.
    """

    manga = models.ForeignKey(Manga, on_delete=models.CASCADE, related_name="match_keys")
    key = models.CharField(max_length=200)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["manga", "key"], name="manga_match_key_unique")]
        # Used by group_series: the mangas sharing a key.
        indexes = [models.Index(fields=["key", "manga"], name="manga_match_key_idx")]


class MangaSource(models.Model):
    """Where a manga lives on a source. Kept (with `dropped_at`) when the source drops it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    manga = models.ForeignKey(Manga, on_delete=models.CASCADE, related_name="sources")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="mangas")
    source_manga_key = models.CharField(max_length=300)
    url = models.URLField(max_length=1000, blank=True)
    dropped_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "source_manga_key"], name="manga_source_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}:{self.source_manga_key}"


class Chapter(models.Model):
    class SyncState(models.TextChoices):
        NEW = "new"
        QUEUED = "queued"
        DOWNLOADING = "downloading"
        DONE = "done"
        FAILED = "failed"

    class Kind(models.TextChoices):
        """Main story or an extra (side story, special, notice...): catalog.chapter_numbers tells them apart."""

        CHAPTER = chapter_numbers.CHAPTER, "Chapter"
        EXTRA = chapter_numbers.EXTRA, "Extra"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    manga = models.ForeignKey(Manga, on_delete=models.CASCADE, related_name="chapters")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="chapters")
    source_chapter_key = models.CharField(max_length=300)
    # An extra's number counts extras only ("Side Story 19" is extra 19, apart from chapter 19). The database
    # default too: bulk SQL that predates kinds (bench/bigsite/seed.py's INSERT ... SELECT) still inserts rows.
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.CHAPTER, db_default=Kind.CHAPTER)
    volume = models.PositiveIntegerField(null=True, blank=True)
    number = models.DecimalField(max_digits=10, decimal_places=2)
    title = models.CharField(max_length=500, blank=True)
    url = models.URLField(max_length=1000, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    dropped_at = models.DateTimeField(null=True, blank=True)
    sync_state = models.CharField(max_length=16, choices=SyncState.choices, default=SyncState.NEW)
    page_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["number", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["source", "source_chapter_key"], name="chapter_unique_source_key"),
        ]
        indexes = [
            models.Index(fields=["manga", "number"], name="chapter_manga_number_idx"),
            # A manga's chapters in reading order (catalog.chapter_order.READING_ORDER): the manga page's
            # chapter list, the readers' next/previous and "which page shows this chapter" walk it.
            # An ascending index keeps NULLs last on PostgreSQL, as the order asks (SQLite cannot index NULLS LAST).
            models.Index(
                fields=["manga", "kind", "volume", "number", "created_at", "id"], name="chapter_reading_order_idx"
            ),
            # The admin's chapter list sorts by Meta.ordering: a page is an index walk, not a sort of every chapter.
            models.Index(fields=["number", "created_at"], name="chapter_ordering_idx"),
            # The dashboard's chapters per source and download state (console.status.source_stats): index-only.
            models.Index(fields=["source", "sync_state"], name="chapter_source_state_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.manga_id} {self.kind} #{self.number}"


class Page(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="pages")
    index = models.PositiveIntegerField()
    image = models.FileField(upload_to="pages/", max_length=300)
    content_type = models.CharField(max_length=50)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    bytes = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chapter", "index"]
        constraints = [models.UniqueConstraint(fields=["chapter", "index"], name="page_unique_index")]

    def __str__(self) -> str:
        return f"{self.chapter_id} p{self.index}"


class Bookmark(models.Model):
    """A user's bookmark on a manga, or on one chapter of it. Both kinds may coexist."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bookmarks")
    manga = models.ForeignKey(Manga, on_delete=models.CASCADE, related_name="bookmarks")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, null=True, blank=True, related_name="bookmarks")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "manga"], condition=Q(chapter__isnull=True), name="bookmark_unique_manga_level"
            ),
            models.UniqueConstraint(
                fields=["user", "manga", "chapter"],
                condition=Q(chapter__isnull=False),
                name="bookmark_unique_chapter_level",
            ),
        ]


class SeriesChange(models.Model):
    """One merge, split or undo of series, as it was done: who, why, and every manga it moved (reversible)."""

    class Action(models.TextChoices):
        MERGE = "merge"
        SPLIT = "split"
        UNDO = "undo"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    action = models.CharField(max_length=8, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    # Where it came from: "admin", "api", "cli", "group_series", "suggestion".
    via = models.CharField(max_length=32)
    reason = models.CharField(max_length=500, blank=True)
    # [{"manga": id, "from": series id, "to": series id}, ...]: the undo moves each back.
    moves = models.JSONField(default=list)
    undoes = models.OneToOneField("self", on_delete=models.PROTECT, null=True, blank=True, related_name="undone_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} of {len(self.moves)} manga(s) at {self.created_at:%Y-%m-%d %H:%M}"


class SeriesSuggestion(models.Model):
    """A possible merge matching found on weaker evidence, for an operator to confirm or reject.

    The pair is stored in one order (`first` < `second` by id) so a pair is
    suggested once; a rejected pair is never suggested again.
    """

    class State(models.TextChoices):
        PENDING = "pending"
        CONFIRMED = "confirmed"
        REJECTED = "rejected"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    first = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="+")
    # What matching saw: catalog.series_matching.Verdict.reasons.
    evidence = models.JSONField(default=list)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["first", "second"], name="series_suggestion_unique_pair")]
        indexes = [
            # The review list: pending suggestions, oldest first.
            models.Index(
                fields=["created_at", "id"], name="series_suggestion_pending_idx", condition=Q(state="pending")
            )
        ]

    def __str__(self) -> str:
        return f"{self.first_id} ~ {self.second_id} ({self.state})"
