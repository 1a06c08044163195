"""One manga through the pipeline: detail -> metadata upsert -> cover -> chapter sync.

The metadata pass and the `sync_manga` job both call `process_manga_ref`, so
the two paths stay in lockstep (one pipeline, several callers). The chapter
steps live in `crawler.passes.chapters` (list sync, content enqueue) and
`crawler.passes.chapter_download` (page download).
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, models, transaction

from catalog.copies import remove_orphan_copies
from catalog.cover_hash import stored_cover_hash
from catalog.models import Manga, MangaSource, Source, Tag
from catalog.series import refresh_match_keys
from catalog.series_candidates import group_arrival
from catalog.storage import delete_stored, store_image_stream
from crawler.passes.chapters import ChapterSyncResult, sync_chapters
from jobs.worker.status.handle import StatusHandle
from sources.base import MangaDetail, MangaMetadata, SourceMangaRef
from sources.base import Source as SourceAdapter
from sources.errors import CrawlerError, RetryLater, SessionExpired, SourceBusy

logger = logging.getLogger(__name__)


class MetadataOutcome(enum.Enum):
    INSERTED = "inserted"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class CoverOutcome(enum.Enum):
    FETCHED = "fetched"
    FAILED = "failed"
    # Already stored from the same URL, or the source shows no cover.
    NOT_NEEDED = "not_needed"


@dataclass(frozen=True)
class MangaOutcome:
    manga: Manga
    metadata: MetadataOutcome
    chapters: ChapterSyncResult
    cover: CoverOutcome


def process_manga_ref(
    source_row: Source, source: SourceAdapter, ref: SourceMangaRef, *, status: StatusHandle
) -> MangaOutcome:
    """Fetch one manga's detail and bring its metadata, cover and chapter list up to date.

    A cover failure is recorded on the manga (`cover_state=failed`, retried by
    the cover backfill) and does not fail the manga; any other failure
    propagates so the caller counts it (the pass) or retries it (the job).
    """
    detail = source.manga_detail(ref)
    manga, outcome = upsert_metadata(source_row, ref, detail)
    cover = CoverOutcome.NOT_NEEDED
    if needs_cover_fetch(manga.cover_state, manga.cover.name, detail.cover_url):
        cover = fetch_cover(manga, source, status=status)
    chapters = sync_chapters(manga, source_row, list(detail.chapters))
    return MangaOutcome(manga=manga, metadata=outcome, chapters=chapters, cover=cover)


# --- metadata --------------------------------------------------------------------------


def metadata_hash(metadata: MangaMetadata, cover_url: str) -> str:
    """Fingerprint of what the source says about a manga; equal hashes mean Unchanged.

    Tags are sorted because sources list them in no stable order; the cover URL
    is included so a new cover counts as an update and gets fetched.
    """
    canonical = {
        "title": metadata.title,
        "alt_titles": list(metadata.alt_titles),
        "description": metadata.description,
        "authors": list(metadata.authors),
        "status": metadata.status,
        "tags": sorted(set(metadata.tags)),
        "cover_url": cover_url,
    }
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def needs_cover_fetch(cover_state: str, stored_name: str, cover_url: str) -> bool:
    """A cover is fetched when the source shows one and we do not hold it.

    A changed cover URL counts as not held: the upsert marks it missing.
    """
    if not cover_url:
        return False
    return cover_state != Manga.CoverState.STORED or not stored_name


def _clip(value: str, field: str) -> str:
    """Cut a source string to the column's length: an overlong title must not fail the manga."""
    return value[: cast(models.CharField, Manga._meta.get_field(field)).max_length]


def _status(value: str) -> str:
    """Sources spell statuses their own way ("Ongoing"); anything unrecognised is unknown."""
    normalised = value.strip().lower()
    return normalised if normalised in Manga.Status.values else Manga.Status.UNKNOWN


def upsert_metadata(source_row: Source, ref: SourceMangaRef, detail: MangaDetail) -> tuple[Manga, MetadataOutcome]:
    """Insert or update the manga behind `ref`; the stored metadata hash decides Unchanged.

    Keyed by `(source, source_manga_key)`. Two callers can race on a new key
    (the pass and a reconcile-enqueued `sync_manga` job); the unique
    constraint on `MangaSource` decides, and the loser updates the winner's row.
    """
    if not detail.metadata.title.strip():
        # What markup drift on a detail page looks like; storing it would blank the title.
        raise CrawlerError(f"source {source_row.id!r}: detail page of {ref.key!r} has no title")
    digest = metadata_hash(detail.metadata, detail.cover_url)
    link = MangaSource.objects.select_related("manga").filter(source=source_row, source_manga_key=ref.key).first()
    if link is None:
        try:
            with transaction.atomic():
                manga = Manga(metadata_hash=digest)
                _apply_metadata(manga, detail)
                manga.save()
                _set_tags(manga, detail.metadata.tags)
                MangaSource.objects.create(manga=manga, source=source_row, source_manga_key=ref.key, url=ref.url)
                refresh_match_keys([manga])
            # Another source's copy of it joins its series now, before its chapters are queued: each chapter is
            # downloaded once (crawler.series_downloads).
            group_arrival(manga)
            manga.refresh_from_db(fields=["series"])
            return manga, MetadataOutcome.INSERTED
        except IntegrityError:
            link = MangaSource.objects.select_related("manga").get(source=source_row, source_manga_key=ref.key)
    _refresh_link(link, ref)
    manga = link.manga
    if manga.metadata_hash == digest:
        return manga, MetadataOutcome.UNCHANGED
    cover_changed = manga.cover_url != detail.cover_url
    with transaction.atomic():
        _apply_metadata(manga, detail)
        manga.metadata_hash = digest
        fields = ["title", "alt_titles", "description", "authors", "status", "cover_url", "metadata_hash"]
        if cover_changed:
            # The stored file stays until the new cover replaces it (fetch_cover).
            manga.cover_state = Manga.CoverState.MISSING
            fields.append("cover_state")
        manga.save(update_fields=[*fields, "updated_at"])
        _set_tags(manga, detail.metadata.tags)
        refresh_match_keys([manga])
    return manga, MetadataOutcome.UPDATED


def _apply_metadata(manga: Manga, detail: MangaDetail) -> None:
    meta = detail.metadata
    manga.title = _clip(meta.title, "title")
    manga.alt_titles = list(meta.alt_titles)
    manga.description = meta.description
    manga.authors = list(meta.authors)
    manga.status = _status(meta.status)
    manga.cover_url = _clip(detail.cover_url, "cover_url")


def _refresh_link(link: MangaSource, ref: SourceMangaRef) -> None:
    """A manga seen in the list again is no longer dropped; its URL follows the source."""
    fields = []
    if link.dropped_at is not None:
        link.dropped_at = None
        fields.append("dropped_at")
    if ref.url and link.url != ref.url:
        link.url = ref.url
        fields.append("url")
    if fields:
        link.save(update_fields=[*fields, "updated_at"])


def _set_tags(manga: Manga, names: tuple[str, ...]) -> None:
    max_len = Tag._meta.get_field("name").max_length
    wanted = sorted({n.strip()[:max_len] for n in names if n.strip()})
    if wanted:
        Tag.objects.bulk_create([Tag(name=n) for n in wanted], ignore_conflicts=True)
    manga.tags.set(Tag.objects.filter(name__in=wanted))


# --- cover -------------------------------------------------------------------------------


def fetch_cover(manga: Manga, source: SourceAdapter, *, status: StatusHandle) -> CoverOutcome:
    """Download `manga.cover_url` into `covers/<manga.id>/`, replacing any older file.

    Any failure except an expired session, a cooling or a busy source marks
    the cover failed for the backfill to retry; those propagate because every
    later fetch would hit the same login wall or cooldown, and a busy
    source's job is given back whole.
    """
    with status.begin_cover(manga_id=manga.id, manga_title=manga.title):
        try:
            stream = source.open_image(manga.cover_url)
            try:
                stored = store_image_stream(
                    stream, directory=f"covers/{manga.id}", max_bytes=settings.CRAWLER_MAX_IMAGE_BYTES
                )
            finally:
                stream.close()
        except (SessionExpired, RetryLater, SourceBusy):
            raise  # every later fetch of the source would meet the same wall, cooldown or busy source
        except Exception as exc:  # noqa: BLE001 - a cover never fails its manga
            logger.warning("cover fetch failed manga=%s url=%s: %s", manga.id, manga.cover_url, exc)
            manga.cover_state = Manga.CoverState.FAILED
            manga.save(update_fields=["cover_state", "updated_at"])
            return CoverOutcome.FAILED
    manga.cover.name = stored.name
    manga.cover_state = Manga.CoverState.STORED
    # Series matching compares covers by this hash; "" (undecodable) leaves the cover out of matching.
    manga.cover_hash = stored_cover_hash(stored.name)
    manga.save(update_fields=["cover", "cover_state", "cover_hash", "updated_at"])
    refresh_match_keys([manga])
    _remove_other_covers(manga, keep=stored.name)
    logger.info("cover stored manga=%s name=%s bytes=%s", manga.id, stored.name, stored.size)
    return CoverOutcome.FETCHED


def _remove_other_covers(manga: Manga, *, keep: str) -> None:
    """Delete every file in the manga's cover directory but the current cover.

    That is the replaced cover, and whatever a process killed mid-fetch left
    behind (a temp file, or a stored file whose row update never ran).
    """
    directory = f"covers/{manga.id}"
    remove_orphan_copies(directory, [keep])  # the readers' thumbnails of replaced covers
    try:
        _, files = default_storage.listdir(directory)
    except FileNotFoundError:
        return
    for name in files:
        if f"{directory}/{name}" != keep:
            delete_stored(f"{directory}/{name}")
