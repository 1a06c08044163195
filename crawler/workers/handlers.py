"""Crawl job handlers: decode the payload's rows, open the source, call the pipeline.

Each handler is thin on purpose: the work lives in `crawler.passes.pipeline`,
`crawler.passes.metadata_pass` and `crawler.passes.reconcile`, which the tests and the demo
call directly. The worker loop acks a handler's return as done, an exception
as a failed attempt, and releases the lease on `SessionExpired` (the login
wall is not the job's fault).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.models import Chapter, Manga, MangaSource, Source
from crawler import audit
from crawler.passes.chapter_download import download_chapter
from crawler.passes.chapters import fail_over, sync_chapters
from crawler.passes.disk_guard import ensure_room_for_pages
from crawler.passes.download_backfill import run_backfill
from crawler.passes.pipeline import process_manga_ref
from crawler.passes.reconcile import run_reconcile
from crawler.payloads import (
    EnqueueDownloads,
    MetadataPass,
    Reconcile,
    SyncChapterContent,
    SyncChapterList,
    SyncManga,
)
from crawler.series_downloads import fails_for_good
from jobs.kinds import Kind
from jobs.worker.hooks import JobContext as EngineContext
from jobs.worker.status import phases
from jobs.worker.status.handle import StatusHandle
from sources.base import Source as SourceAdapter
from sources.base import SourceMangaRef
from sources.errors import CrawlerError, SourceConfigError

if TYPE_CHECKING:
    from sources.browser import BrowserManager

logger = logging.getLogger(__name__)


@dataclass
class JobContext(EngineContext):
    """What a crawl handler gets besides its payload: the engine's (lease, status, cancel) and the browser.

    `cancel` is set on shutdown, timeout or a lost lease; long handlers check
    it between pages/refs and raise `JobCancelled`.
    """

    status: StatusHandle
    browser: BrowserManager | None = None


def _source_row(source_id: str) -> Source | None:
    """The job's Source row, or None when the source is disabled.

    A disabled source's jobs finish as no-ops rather than burning attempts;
    chapters they leave `queued` are queued again by the next chapter sync
    once the source is enabled.
    """
    row = Source.objects.filter(id=source_id).first()
    if row is None:
        raise SourceConfigError(f"source {source_id!r} does not exist")
    if not row.enabled:
        logger.info("source %s is disabled; skipping its job", source_id)
        return None
    return row


@contextmanager
def _open_source(row: Source, ctx: JobContext) -> Iterator[SourceAdapter]:
    # The adapters (httpx and the parsers with them) are imported by a worker's first job, not at every
    # process's start: a cron-started `--drain` that finds nothing to do never needs them.
    from crawler.factory import get_source

    source = get_source(row, browser=ctx.browser, cancel=ctx.cancel, yield_when_busy=True)
    try:
        yield source
    finally:
        source.close()


def handle_sync_manga(payload: SyncManga, ctx: JobContext) -> None:
    row = _source_row(payload.source_id)
    if row is None:
        return
    if not payload.url:
        # Only a row enqueued before payloads carried the url, with no stored link to take it from (jobs 0006).
        raise CrawlerError(
            f"sync_manga {row.id}:{payload.source_manga_key} has no url and no stored link to take it from; "
            "a reconcile pass enqueues it again with its url"
        )
    ref = SourceMangaRef(key=payload.source_manga_key, url=payload.url, title=payload.title)
    with _open_source(row, ctx) as source:
        outcome = process_manga_ref(row, source, ref, status=ctx.status)
    logger.info(
        "sync_manga %s:%s -> %s, %d new chapters",
        row.id,
        ref.key,
        outcome.metadata.value,
        outcome.chapters.new,
    )


def handle_sync_chapter_list(payload: SyncChapterList, ctx: JobContext) -> None:
    row = _source_row(payload.source_id)
    if row is None:
        return
    manga = Manga.objects.filter(id=payload.manga_id).first()
    if manga is None:
        logger.warning("sync_chapter_list: manga %s no longer exists; nothing to do", payload.manga_id)
        return
    link = MangaSource.objects.filter(source=row, source_manga_key=payload.source_manga_key).first()
    if link is None or not link.url:
        raise CrawlerError(
            f"sync_chapter_list {row.id}:{payload.source_manga_key}: no stored link with a url for manga {manga.id}"
        )
    ref = SourceMangaRef(key=payload.source_manga_key, url=link.url, title=manga.title)
    with _open_source(row, ctx) as source:
        detail = source.manga_detail(ref)
    sync_chapters(manga, row, list(detail.chapters))


def handle_sync_chapter_content(payload: SyncChapterContent, ctx: JobContext) -> None:
    row = _source_row(payload.source_id)
    if row is None:
        return
    chapter = Chapter.objects.select_related("manga").filter(id=payload.chapter_id).first()
    if chapter is None:
        logger.warning("sync_chapter_content: chapter %s no longer exists; nothing to do", payload.chapter_id)
        return
    ensure_room_for_pages()  # a job leased just before the disk filled: released, not failed
    with _open_source(row, ctx) as source:
        try:
            download_chapter(chapter, source, status=ctx.status, cancel=ctx.cancel)
        except Exception as exc:
            if fails_for_good(exc, ctx.lease.attempts, ctx.lease.max_attempts):
                fail_over(chapter, reason=str(exc))
            raise


def handle_metadata_pass(payload: MetadataPass, ctx: JobContext) -> None:
    from crawler.passes.metadata_pass import run_metadata_pass  # with the adapters: see `_open_source`

    row = _source_row(payload.source_id)
    if row is None:
        return
    run_metadata_pass(row, status=ctx.status, browser=ctx.browser, cancel=ctx.cancel)


def handle_reconcile(payload: Reconcile, ctx: JobContext) -> None:
    row = _source_row(payload.source_id)
    if row is None:
        return

    def progress(walked: int, enqueued: int) -> None:
        ctx.status.set_phase(phases.reconciling(walked, enqueued))

    try:
        with _open_source(row, ctx) as source:
            run_reconcile(row, source, progress=progress, cancel=ctx.cancel)
    finally:
        ctx.status.set_phase(phases.idle())


def handle_enqueue_downloads(payload: EnqueueDownloads, ctx: JobContext) -> None:
    queued = run_backfill(payload.source_id, payload.switch, cancel=ctx.cancel)
    if queued is None:
        logger.info("enqueue_downloads: source %s is no longer 'all', or switched again; stopped", payload.source_id)
        return
    detail = {"enqueued": queued}
    audit.record(None, "enqueue_downloads", scope="source", target_id=payload.source_id, detail=detail)


CRAWL_KINDS: tuple[Kind, ...] = (
    Kind(SyncManga, handle_sync_manga, role="crawl"),
    Kind(SyncChapterList, handle_sync_chapter_list, role="crawl"),
    Kind(SyncChapterContent, handle_sync_chapter_content, role="crawl"),
    Kind(MetadataPass, handle_metadata_pass, role="crawl"),
    Kind(Reconcile, handle_reconcile, role="crawl"),
    Kind(EnqueueDownloads, handle_enqueue_downloads, role="crawl"),
)
