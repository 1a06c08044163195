"""A small library stored the way downloads store it (`pages/<chapter id>/<hex>.png`), on whichever storage is default."""

from __future__ import annotations

import hashlib
import threading
import uuid
from decimal import Decimal

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from catalog.models import Chapter, Manga, MangaSource, Page, Source
from reader.tests.factories import image_bytes
from upkeep.models import VerifyRun
from upkeep.verify.run import Options, run_verify, start_or_resume


def stored_chapter(manga: Manga, source: Source, number: int | str, *, pages: int = 2, **fields) -> Chapter:
    chapter = Chapter.objects.create(
        manga=manga,
        source=source,
        source_chapter_key=f"{manga.id}-{number}",
        number=Decimal(str(number)),
        sync_state=Chapter.SyncState.DONE if pages else Chapter.SyncState.NEW,
        page_count=pages,
        **fields,
    )
    for index in range(pages):
        data = image_bytes(30, 40, color=(index * 40 % 255, int(Decimal(str(number)) * 10) % 255, 90))
        name = default_storage.save(f"pages/{chapter.id}/{uuid.uuid4().hex}.png", ContentFile(data))
        Page.objects.create(
            chapter=chapter,
            index=index,
            image=name,
            content_type="image/png",
            bytes=len(data),
            width=30,
            height=40,
            sha256=hashlib.sha256(data).hexdigest(),
        )
    return chapter


def damaged_library() -> dict[str, object]:
    """Chapters 1-5 of one manga: 1 lost a file, 2 has a corrupt page, 4 listed but never downloaded; plus an orphan."""
    source = Source.objects.create(id="site", name="Site", base_url="http://site.example")
    manga = Manga.objects.create(title="Crimson Tide")
    MangaSource.objects.create(manga=manga, source=source, source_manga_key="crimson", url="http://site.example/m/1")
    chapters = {n: stored_chapter(manga, source, n, pages=0 if n == 4 else 2) for n in range(1, 6)}
    missing = Page.objects.get(chapter=chapters[1], index=0)
    default_storage.delete(missing.image.name)
    corrupt = Page.objects.get(chapter=chapters[2], index=1)
    default_storage.delete(corrupt.image.name)
    default_storage.save(corrupt.image.name, ContentFile(b"\x89PNG not the bytes that were stored"))
    orphan = default_storage.save(f"pages/{chapters[3].id}/{uuid.uuid4().hex}.png", ContentFile(image_bytes()))
    return {
        "manga": manga,
        "source": source,
        "chapters": chapters,
        "missing": missing,
        "corrupt": corrupt,
        "orphan": orphan,
    }


def verify_stopping_after_every_batch(limit: int) -> tuple[VerifyRun, int]:
    """Run a full pass that is cancelled after each batch and resumed, as a deadline would; (the run, stops)."""
    cancel = threading.Event()
    stops = 0
    while True:
        run = start_or_resume(Options(full=True))
        if run_verify(run, cancel=cancel, progress=lambda _run: cancel.set()):
            return run, stops
        cancel.clear()
        stops += 1
        assert stops < limit, "the pass does not move on"
