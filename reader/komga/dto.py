"""Our rows as Komga's JSON (schemas in Komga's OpenAPI description): pure functions, no queries.

Every field the schema marks required is sent, since Mihon's parser refuses
a response that lacks one; optional fields we have no value for are left
out rather than sent as null, as Komga does. Locks are all false: nothing
here is edited by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from catalog.models import Chapter, Manga, Page, Source
from reader.cbz import page_name
from reader.komga.params import STATUS_TO_KOMGA, Paging
from reader.komga.queries import Book, media_status, number_sort
from reader.models import ReadProgress
from reader.naming import book_number, chapter_title

WRITER = "writer"
DIRECTIONS = {"rtl": "RIGHT_TO_LEFT", "ltr": "LEFT_TO_RIGHT"}
Urls = Callable[[str, Any], str]  # (route name, id) -> absolute URL


def _utc(moment: datetime) -> str:
    """RFC 3339 in UTC, whole seconds: what Komga's clients parse (Mihon reads 'yyyy-MM-ddTHH:mm:ss')."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def day(moment: datetime | date) -> str:
    return moment.strftime("%Y-%m-%d")


def human_size(size: int) -> str:
    """1536 -> "1.5 KiB", the way Komga writes sizes."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _authors(manga: Manga) -> list[dict[str, str]]:
    return [{"name": name, "role": WRITER} for name in manga.authors if isinstance(name, str) and name]


def series(manga: Manga, *, language: str, direction: str, url: str) -> dict[str, Any]:
    """A SeriesDto. `manga` carries `books_count`, `books_read`, `books_in_progress`, `library_id` and its tags."""
    tags = [t.name for t in manga.tags.all()]
    updated = manga.latest_chapter_at or manga.updated_at
    read, in_progress = manga.books_read, manga.books_in_progress
    metadata = {
        "status": STATUS_TO_KOMGA.get(manga.status, "ONGOING"),
        "statusLock": False,
        "title": manga.title,
        "titleLock": False,
        "titleSort": manga.title,
        "titleSortLock": False,
        "alternateTitles": [{"label": "", "title": t} for t in manga.alt_titles if isinstance(t, str) and t],
        "alternateTitlesLock": False,
        "summary": manga.description,
        "summaryLock": False,
        "readingDirection": DIRECTIONS.get(direction, "LEFT_TO_RIGHT"),
        "readingDirectionLock": False,
        "publisher": "",
        "publisherLock": False,
        "ageRatingLock": False,
        "language": language,
        "languageLock": False,
        "genres": tags,
        "genresLock": False,
        "tags": [],
        "tagsLock": False,
        "links": [],
        "linksLock": False,
        "sharingLabels": [],
        "sharingLabelsLock": False,
        "totalBookCountLock": False,
        "created": _utc(manga.created_at),
        "lastModified": _utc(manga.updated_at),
    }
    return {
        "id": str(manga.id),
        "libraryId": manga.library_id or "",
        "name": manga.title,
        "url": url,
        "created": _utc(manga.created_at),
        "lastModified": _utc(updated),
        "fileLastModified": _utc(updated),
        "booksCount": manga.books_count,
        "booksReadCount": read,
        "booksUnreadCount": max(manga.books_count - read - in_progress, 0),
        "booksInProgressCount": in_progress,
        "metadata": metadata,
        "booksMetadata": {
            "authors": _authors(manga),
            "tags": [],
            "summary": manga.description,
            "summaryNumber": "",
            "created": _utc(manga.created_at),
            "lastModified": _utc(manga.updated_at),
        },
        "deleted": False,
        "oneshot": False,
    }


def read_progress(progress: ReadProgress | None, pages: int) -> dict[str, Any] | None:
    if progress is None or (not progress.completed and progress.last_page == 0):
        return None
    page = pages if progress.completed and pages else max(progress.last_page, 1)
    stamp = _utc(progress.updated_at)
    return {
        "page": page,
        "completed": progress.completed,
        "readDate": stamp,
        "created": stamp,
        "lastModified": stamp,
        "deviceId": "",
        "deviceName": "",
    }


def book(item: Book, *, url: str) -> dict[str, Any]:
    """A BookDto. The chapter carries `stored_pages`, `stored_bytes` and its manga.

    Its series is the series' lead whichever copy the chapter comes from, so a book of another source's copy
    (a merged series' shown chapter, or an alternate a client stored) names the series the client lists.
    """
    chapter: Chapter = item.chapter
    manga = item.series or chapter.manga
    title = chapter_title(chapter)
    size = int(chapter.stored_bytes or 0)
    metadata: dict[str, Any] = {
        "title": title,
        "titleLock": False,
        "summary": "",
        "summaryLock": False,
        "number": book_number(chapter),
        "numberLock": False,
        "numberSort": number_sort(chapter, item.extra_position),
        "numberSortLock": False,
        "releaseDateLock": False,
        "authors": _authors(manga),
        "authorsLock": False,
        "tags": [],
        "tagsLock": False,
        "isbn": "",
        "isbnLock": False,
        "links": [{"label": "Source", "url": chapter.url}] if chapter.url else [],
        "linksLock": False,
        "created": _utc(chapter.created_at),
        "lastModified": _utc(chapter.updated_at),
    }
    if chapter.published_at:
        metadata["releaseDate"] = day(chapter.published_at)
    dto: dict[str, Any] = {
        "id": str(chapter.id),
        "seriesId": str(manga.id),
        "seriesTitle": manga.title,
        "libraryId": chapter.source_id,
        "name": title,
        "url": url,
        "number": item.position,
        "created": _utc(chapter.created_at),
        "lastModified": _utc(chapter.updated_at),
        "fileLastModified": _utc(chapter.updated_at),
        "sizeBytes": size,
        "size": human_size(size),
        "fileHash": "",
        "media": {
            "status": media_status(chapter),
            "mediaType": "application/zip",
            "pagesCount": chapter.stored_pages,
            "mediaProfile": "DIVINA",
            "comment": "",
            "epubDivinaCompatible": False,
            "epubIsKepub": False,
        },
        "metadata": metadata,
        "deleted": chapter.dropped_at is not None,
        "oneshot": False,
    }
    progress = read_progress(item.progress, chapter.stored_pages)
    if progress is not None:
        dto["readProgress"] = progress
    return dto


def page(row: Page, total: int) -> dict[str, Any]:
    dto: dict[str, Any] = {
        "number": row.index + 1,
        "fileName": page_name(row.index, total, row.content_type),
        "mediaType": row.content_type,
        "sizeBytes": row.bytes,
        "size": human_size(row.bytes),
    }
    if row.width and row.height:
        dto.update(width=row.width, height=row.height)
    return dto


def library(source: Source) -> dict[str, Any]:
    flags = (
        "analyzeDimensions convertToCbz emptyTrashAfterScan hashFiles hashKoreader hashPages importBarcodeIsbn "
        "importComicInfoBook importComicInfoCollection importComicInfoReadList importComicInfoSeries "
        "importComicInfoSeriesAppendVolume importEpubBook importEpubSeries importLocalArtwork importMylarSeries "
        "repairExtensions scanCbx scanEpub scanForceModifiedTime scanOnStartup scanPdf"
    ).split()
    return {
        "id": source.id,
        "name": source.name,
        "root": source.base_url,
        **dict.fromkeys(flags, False),
        "scanDirectoryExclusions": [],
        "scanInterval": "DISABLED",
        "seriesCover": "FIRST",
        "unavailable": not source.enabled,
    }


def spring_page(content: Sequence[Any], paging: Paging, total: int) -> dict[str, Any]:
    """Spring Data's Page JSON, which every Komga list answers with."""
    size = len(content) if paging.unpaged else paging.size
    pages = 1 if paging.unpaged else (total + size - 1) // size if size else 0
    sort = {"empty": True, "sorted": False, "unsorted": True}
    return {
        "content": list(content),
        "pageable": {
            "offset": paging.offset if not paging.unpaged else 0,
            "pageNumber": paging.number,
            "pageSize": size,
            "paged": not paging.unpaged,
            "unpaged": paging.unpaged,
            "sort": sort,
        },
        "totalElements": total,
        "totalPages": pages,
        "last": paging.unpaged or paging.number >= pages - 1,
        "first": paging.number == 0,
        "number": paging.number,
        "size": size,
        "numberOfElements": len(content),
        "sort": sort,
        "empty": not content,
    }


def tracker_progress(numbers: list[Decimal], completed: set[int], in_progress: set[int]) -> dict[str, Any]:
    """Mihon's tracker view of a series: counts, the last chapter read without a gap, the highest chapter.

    `numbers` are the readable chapters' numbers in order; the sets hold indexes into it.
    """
    continuous = Decimal(0)
    for index, number in enumerate(numbers):
        if index not in completed:
            break
        continuous = number
    read, started = len(completed), len(in_progress - completed)
    return {
        "booksCount": len(numbers),
        "booksReadCount": read,
        "booksUnreadCount": len(numbers) - read - started,
        "booksInProgressCount": started,
        "lastReadContinuousNumberSort": float(continuous),
        "maxNumberSort": float(max(numbers)) if numbers else 0.0,
    }
