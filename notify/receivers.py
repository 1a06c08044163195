"""What notify hears from the apps below it."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from notify.models import ReadyChapter


def record_ready_chapter(sender: Any, *, chapter: Any, **kwargs: Any) -> None:
    """`catalog.signals.chapter_ready`: note the chapter for the next digest pass (one INSERT, nothing sent here)."""
    ReadyChapter.objects.create(chapter_id=chapter.id, ready_at=timezone.now())
