"""Read progress: how far each user got in each chapter; KOReader's names of the CBZs we served."""

from django.conf import settings
from django.db import models

from catalog.models import Chapter

__all__ = ["DocumentDigest", "ReadProgress", "ReaderPreference"]


class ReadProgress(models.Model):
    """One row per (user, chapter). `last_page` is 1-based: 0 means opened, nothing read yet."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="read_progress")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="read_progress")
    last_page = models.PositiveIntegerField(default=0)
    completed = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "chapter"], name="read_progress_unique_user_chapter")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.chapter_id} p{self.last_page}"


class DocumentDigest(models.Model):
    """A KOReader document id of a CBZ we served, so a kosync progress report finds its chapter.

    KOReader names a book by the partial MD5 of its file ("binary") or the MD5
    of its file name ("filename"); both are recorded when the CBZ is served.
    """

    class Method(models.TextChoices):
        BINARY = "binary"
        FILENAME = "filename"

    digest = models.CharField(max_length=32, unique=True)
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="document_digests")
    method = models.CharField(max_length=8, choices=Method.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.method} {self.digest} -> {self.chapter_id}"


class ReaderPreference(models.Model):
    """A user's choices for the web app that follow them from device to device: the colour theme."""

    class Theme(models.TextChoices):
        SYSTEM = "system", "Follow the system"
        LIGHT = "light"
        DARK = "dark"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reader_preference")
    theme = models.CharField(max_length=8, choices=Theme.choices, default=Theme.SYSTEM)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id} theme={self.theme}"
