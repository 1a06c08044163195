"""Download one chapter's page images into storage (the `sync_chapter_content` job).

Crash-safe by construction, because a worker can be killed (-9) between any
two statements:
- pages' `Page` rows are written after their files are stored, in one INSERT
  for every `PAGE_ROWS_PER_INSERT` pages (and whatever is stored when the job
  stops for any reason but a kill), so a re-run skips every index that
  already has a row;
- a file stored just before a kill has no row yet: the re-run first deletes
  every file in the chapter's directory that no `Page` row references
  (including a temp file cut short mid-write), and the readers' scaled
  copies of pages whose rows were deleted, so nothing is orphaned;
- a batch's files, bytes and names, are made durable together (one
  `make_stored_durable`) before the INSERT that names them, so after a power
  cut no row names a file whose bytes were lost;
- the `(chapter, index)` unique constraint turns a duplicate writer into an
  IntegrityError: that batch is written row by row, and the file of each row
  another run wrote first is deleted again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.chapter_names import short_label
from catalog.copies import remove_orphan_copies
from catalog.models import Chapter, Page
from catalog.signals import chapter_ready
from catalog.storage import delete_stored, make_stored_durable, store_image_stream
from crawler.passes.page_rows import insert_page_rows
from crawler.pipeline_signals import chapter_downloaded
from jobs.errors import JobCancelled
from jobs.worker.status.handle import StatusHandle
from sources.base import Source as SourceAdapter
from sources.base import SourceChapter
from sources.errors import CrawlerError, ImageRefused, ImageRejected, RetryLater, SessionExpired, SourceBusy

logger = logging.getLogger(__name__)

# Rows written together: one INSERT per this many pages instead of one per page
# (a statement and a commit each). A kill -9 loses at most this many stored
# files to the orphan sweep, which are downloaded again.
PAGE_ROWS_PER_INSERT = 10


def page_directory(chapter_id: object) -> str:
    """Storage directory of a chapter's pages: built from our id, never from source strings."""
    return f"pages/{chapter_id}"


def orphan_names(directory: str, files: Sequence[str], referenced: set[str]) -> list[str]:
    """Storage names in `directory` that no Page row references."""
    return sorted(f"{directory}/{f}" for f in files if f"{directory}/{f}" not in referenced)


def download_chapter(chapter: Chapter, source: SourceAdapter, *, status: StatusHandle, cancel: threading.Event) -> int:
    """Store every page of `chapter` not stored yet; returns how many pages this call stored.

    The chapter shows in the live status with its page count while it runs.
    On success the chapter is `done` with its `page_count`. On failure it is
    marked `failed` and the error propagates so the queue retries the job; on
    cancellation, an expired session, a cooling or busy source it goes back
    to `queued`, since the released job will run again.
    """
    manga = chapter.manga
    with status.begin_chapter(
        manga_id=manga.id,
        manga_title=manga.title,
        chapter_id=chapter.id,
        chapter_number=chapter.number,
        chapter_label=short_label(chapter.number, chapter.title, chapter.kind),
    ):
        _set_state(chapter, Chapter.SyncState.DOWNLOADING)
        try:
            stored = _download(chapter, source, status=status, cancel=cancel)
        except (JobCancelled, SessionExpired, RetryLater, SourceBusy):
            _set_state(chapter, Chapter.SyncState.QUEUED)
            raise
        except Exception:
            _set_state(chapter, Chapter.SyncState.FAILED)
            raise
    # Analysis (when installed) queues the pages not analysed yet: all of the
    # chapter's, since pages kept from an interrupted run never reached here.
    chapter_downloaded.send(Chapter, chapter=chapter)
    # Readers may be told (notify's digests); robust, so telling them can never fail the chapter.
    for _, error in chapter_ready.send_robust(Chapter, chapter=chapter):
        if error is not None:
            logger.warning("chapter %s: a chapter_ready listener failed: %s", chapter.id, error)
    return len(stored)


def _download(chapter: Chapter, source: SourceAdapter, *, status: StatusHandle, cancel: threading.Event) -> list[Page]:
    urls = source.chapter_pages(_as_source_chapter(chapter))
    if not urls:
        # Markup drift usually looks like this; "done with 0 pages" would hide it.
        raise CrawlerError(f"source lists no pages for chapter {chapter.id} ({chapter.source_chapter_key})")
    directory = page_directory(chapter.id)
    rows = list(Page.objects.filter(chapter=chapter).values_list("index", "image"))  # one read for both uses
    remove_orphans(chapter, referenced={image for _, image in rows})
    have = {index for index, _ in rows}
    total = len(urls)
    done = sum(1 for i in range(total) if i in have)
    status.set_chapter_pages(chapter.id, done, total)
    stored: list[Page] = []
    unwritten: list[Page] = []
    try:
        for index, url in enumerate(urls):
            if index in have:
                continue
            if cancel.is_set():
                raise JobCancelled(f"chapter {chapter.id} cancelled after {done} of {total} pages")
            unwritten.append(_store_page(chapter, source, index, url, directory))
            done += 1
            status.set_chapter_pages(chapter.id, done, total)
            if len(unwritten) >= PAGE_ROWS_PER_INSERT:
                stored += write_pages(unwritten)
                unwritten = []
    except BaseException:
        _write_before_leaving(chapter, unwritten)
        raise
    stored += write_pages(unwritten)
    chapter.page_count = total
    chapter.sync_state = Chapter.SyncState.DONE
    chapter.save(update_fields=["page_count", "sync_state", "updated_at"])
    return stored


def _store_page(chapter: Chapter, source: SourceAdapter, index: int, url: str, directory: str) -> Page:
    """Stream one page into storage; its row, not written yet."""
    stream = source.open_image(url)
    try:
        image = store_image_stream(
            stream, directory=directory, max_bytes=settings.CRAWLER_MAX_IMAGE_BYTES, durable=False
        )
    except ImageRejected as exc:
        where = f"source {chapter.source_id!r}: page {index + 1} of chapter {chapter.id} {url}"
        raise ImageRefused(f"{where}: {exc}") from exc
    finally:
        stream.close()
    return Page(
        chapter=chapter,
        index=index,
        image=image.name,
        content_type=image.content_type,
        width=image.width,
        height=image.height,
        bytes=image.size,
        sha256=image.sha256,
    )


def write_pages(pages: list[Page]) -> list[Page]:
    """Insert the rows of stored pages in one statement (`page_rows`); returns the rows this call wrote.

    When another run wrote one of the indexes first, the batch is written row
    by row and each duplicate's file is deleted.
    """
    if not pages:
        return []
    # The files, bytes and names, are made durable before any row names them (`_store_page` leaves it to here).
    make_stored_durable(page_directory(pages[0].chapter_id))
    try:
        insert_page_rows(pages)
        return pages
    except IntegrityError:
        pass
    written = []
    for page in pages:
        try:
            with transaction.atomic():
                page.save(force_insert=True)
        except IntegrityError:
            delete_stored(page.image.name)
            logger.warning(
                "chapter %s page %d was stored concurrently; dropped the duplicate", page.chapter_id, page.index
            )
            continue
        written.append(page)
    return written


def _write_before_leaving(chapter: Chapter, pages: list[Page]) -> None:
    """The job stops (cancelled, source busy or cooling, a failed page): keep the rows of the pages it stored."""
    try:
        write_pages(pages)
    except Exception:  # the database is what failed: the orphan sweep of the next run takes the files
        logger.warning("chapter %s: could not record %d stored pages; they are fetched again", chapter.id, len(pages))


def remove_orphans(chapter: Chapter, referenced: set[str]) -> list[str]:
    """Delete files in the chapter's directory that none of `referenced` (its Page rows' names) is, and the
    readers' scaled copies of pages that have no row any more (deleted for a re-download); returns their names."""
    directory = page_directory(chapter.id)
    try:
        _, files = default_storage.listdir(directory)
    except FileNotFoundError:
        files = []
    orphans = orphan_names(directory, files, referenced)
    for name in orphans:
        delete_stored(name)
    copies = remove_orphan_copies(directory, referenced)
    if orphans or copies:
        logger.info("chapter %s: removed %d orphaned files and %d stale copies", chapter.id, len(orphans), len(copies))
    return orphans + copies


def _as_source_chapter(chapter: Chapter) -> SourceChapter:
    return SourceChapter(
        key=chapter.source_chapter_key,
        number=chapter.number,
        title=chapter.title,
        url=chapter.url,
        published_at=chapter.published_at,
        kind=chapter.kind,
        volume=chapter.volume,
    )


def _set_state(chapter: Chapter, state: str) -> None:
    chapter.sync_state = state
    Chapter.objects.filter(id=chapter.id).update(sync_state=state, updated_at=timezone.now())
