"""A chapter as a CBZ: ComicInfo.xml then its pages, STORED, streamed from storage.

Nothing is built in memory: zipstream-ng yields the archive chunk by chunk
and reads each page through `storage.open` only when its turn comes, so
peak memory is one read block whatever the chapter weighs, on the local
file system or an S3-compatible backend alike. Pages are already
compressed images; deflating them again would cost CPU for nothing.

A chapter's CBZ is byte-identical on every download (fixed entry times,
pages in index order, tags sorted): KOReader names a book by a hash of its
bytes, and kosync finds the chapter again by that name.

ComicInfo's series fields are the series' (`SeriesFacts`): a chapter from any
source's copy of a series files under its lead's title, summary and authors,
with the tags of every copy, so a media server shows the series once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from xml.etree import ElementTree as ET

import zipstream.ng
from django.core.files.storage import default_storage
from zipstream import ZIP_STORED, ZipStream

from catalog.models import Chapter, Manga, Page, Tag
from catalog.series_leads import lead_of
from catalog.text import clean_text
from reader.naming import book_number, chapter_title
from reader.source_settings import language, reading_direction

READ_BLOCK = 256 * 1024
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class _ZipEpochClock:
    """zipstream-ng's view of "now": the ZIP epoch, so entries added from memory or an iterator get a fixed time.

    zipstream-ng stamps such entries with the current local time and offers no
    way to pass one (pR0Ps/zipstream-ng#27); it reads the time only through
    `time.localtime`, which this stands in for inside that module alone.
    Entries added from real files (`add_path`, unused here) keep their mtimes.
    """

    @staticmethod
    def localtime(seconds: float | None = None) -> tuple[int, ...] | time.struct_time:
        return (*ZIP_EPOCH, 1, 1, -1) if seconds is None else time.localtime(seconds)


zipstream.ng.time = _ZipEpochClock  # type: ignore[assignment]
_EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif", "image/avif": "avif"}


@dataclass(frozen=True)
class PageInfo:
    width: int
    height: int
    size: int


def comic_info(
    *,
    series: str,
    number: str,
    title: str,
    summary: str,
    writers: list[str],
    genres: list[str],
    web: str,
    language_iso: str,
    right_to_left: bool,
    pages: list[PageInfo],
    volume: int | None = None,
    special: bool = False,
) -> bytes:
    """ComicInfo.xml (schema v2.0). Element order is the schema's xs:sequence order; it is validated in tests.

    v2.0 has no <Tags> element (it arrives in the v2.1 draft), so our tags go
    to <Genre>, the v2.0 field Komga and Kavita read them from. An extra is
    <Format>Special</Format> (Kavita files it under the series' specials) and
    its <Number> is its label ("Side Story 19"), which no importer reads as a
    main chapter's number.
    """
    root = ET.Element(
        "ComicInfo",
        {"xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance", "xmlns:xsd": "http://www.w3.org/2001/XMLSchema"},
    )

    def add(name: str, value: str) -> None:
        value = clean_text(value)  # a second line behind the crawler's: ill-formed XML would hide the whole file
        if value:
            ET.SubElement(root, name).text = value

    add("Title", title)
    add("Series", series)
    add("Number", number)
    add("Volume", str(volume) if volume is not None else "")
    add("Summary", summary)
    add("Writer", ", ".join(writers))
    add("Genre", ", ".join(genres))
    add("Web", web)
    add("PageCount", str(len(pages)))
    add("LanguageISO", language_iso)
    add("Format", "Special" if special else "")
    add("Manga", "YesAndRightToLeft" if right_to_left else "Yes")
    listing = ET.SubElement(root, "Pages")
    for index, page in enumerate(pages):
        attrs = {"Image": str(index), "ImageSize": str(page.size)}
        if page.width and page.height:
            attrs.update(ImageWidth=str(page.width), ImageHeight=str(page.height))
        if index == 0:
            attrs["Type"] = "FrontCover"
        ET.SubElement(listing, "Page", attrs)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _read_stored(name: str) -> Iterator[bytes]:
    with default_storage.open(name, "rb") as handle:
        while block := handle.read(READ_BLOCK):
            yield block


def page_name(index: int, total: int, content_type: str) -> str:
    """0001.jpg ...: zero-padded to the page count's width (at least 4), so every reader sorts them right."""
    return f"{index + 1:0{max(4, len(str(total)))}d}.{_EXTENSIONS.get(content_type, 'img')}"


def chapter_pages(chapter: Chapter) -> list[Page]:
    return list(
        Page.objects.filter(chapter=chapter)
        .order_by("index")
        .only("image", "content_type", "width", "height", "bytes", "index")
    )


@dataclass(frozen=True)
class SeriesFacts:
    """What ComicInfo says of a chapter's series: its lead's title, summary and authors, every copy's tags."""

    title: str
    summary: str
    writers: tuple[str, ...]
    genres: tuple[str, ...]

    @classmethod
    def of(cls, lead: Manga, tags: list[str]) -> SeriesFacts:
        return cls(lead.title, lead.description, tuple(lead.authors), tuple(sorted(set(tags))))


def series_tags(series_ids: list[object]) -> dict[str, list[str]]:
    """The tags of every copy of each series, by series id (one query)."""
    rows = Manga.tags.through.objects.filter(manga__series_id__in=series_ids).values_list(
        "manga__series_id", "tag__name"
    )
    found: dict[str, list[str]] = {}
    for series_id, name in rows:
        found.setdefault(str(series_id), []).append(name)
    return found


def series_facts(manga: Manga) -> SeriesFacts:
    """`manga`'s series as ComicInfo names it (its lead found when `manga` is a copy; one query for the tags)."""
    lead = lead_of(manga)
    tags = Tag.objects.filter(mangas__series_id=lead.series_id).values_list("name", flat=True)
    return SeriesFacts.of(lead, list(tags))


def chapter_comic_info(chapter: Chapter, series: SeriesFacts, pages: list[Page]) -> bytes:
    link = chapter.manga.sources.filter(source_id=chapter.source_id).only("url").first()
    return comic_info(
        series=series.title,
        number=book_number(chapter),
        volume=chapter.volume,
        special=chapter.kind != Chapter.Kind.CHAPTER,
        title=chapter_title(chapter),
        summary=series.summary,
        writers=list(series.writers),
        genres=list(series.genres),
        web=chapter.url or (link.url if link else ""),
        language_iso=language(chapter.source),
        right_to_left=reading_direction(chapter.source) == "rtl",
        pages=[PageInfo(p.width, p.height, p.bytes) for p in pages],
    )


def chapter_zip(chapter: Chapter, series: SeriesFacts | None = None) -> ZipStream:
    """The CBZ of `chapter` as a lazy ZipStream (sized when every page's byte count is known); `series`: its
    series' facts when the caller has them (else read)."""
    pages = chapter_pages(chapter)
    sized = all(p.bytes > 0 for p in pages)
    archive = ZipStream(compress_type=ZIP_STORED, sized=sized)
    facts = series if series is not None else series_facts(chapter.manga)
    archive.add(chapter_comic_info(chapter, facts, pages), "ComicInfo.xml")
    for index, page in enumerate(pages):
        archive.add(
            _read_stored(page.image.name),
            page_name(index, len(pages), page.content_type),
            size=page.bytes if sized else None,
        )
    return archive
