"""What MangaDex's JSON answers mean to the crawler: pure readings, tested without a server.

The shapes are those of MangaDex's OpenAPI description (5.10.0): a manga is
`{id, attributes: {title, altTitles, description, status, tags}, relationships}`
with the author, artist and cover_art relationships expanded by `includes[]`;
a chapter is `{id, attributes: {chapter, volume, title, pages, externalUrl,
publishAt, translatedLanguage}}`; the at-home server answers
`{baseUrl, chapter: {hash, data, dataSaver}}`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from sources.base import MangaMetadata, SourceChapter, SourceMangaRef
from sources.errors import CrawlerError

SITE = "https://mangadex.org"
HOSTS = frozenset({"mangadex.org", "www.mangadex.org"})
STATUSES = frozenset({"ongoing", "completed", "hiatus", "cancelled"})


class AnswerUnreadable(CrawlerError):
    """A MangaDex answer lacks what its published shape promises (an outage page, a changed API)."""


@dataclass
class FeedNotes:
    """Chapters the feed listed that the crawl cannot read, counted for the metadata pass's summary."""

    external_chapters: int = 0  # hosted elsewhere (`externalUrl`): MangaDex serves no pages for them
    unavailable_chapters: int = 0  # `isUnavailable`, or no pages: removed or not yet readable
    unparsed_dates: int = 0
    examples: list[str] = field(default_factory=list)


def is_mangadex_address(url: str) -> bool:
    """Whether an address an operator typed is MangaDex's site (any page of it)."""
    return (urlsplit(url).hostname or "").lower() in HOSTS


def pick_title(names: Mapping[str, str], alt_titles: Iterable[Mapping[str, str]], languages: tuple[str, ...]) -> str:
    """The title in the first of `languages` that has one (main title before alternatives), else the main title.

    MangaDex keeps one main title (often romanised Japanese) and files the
    English and other titles under `altTitles`, so an English reader's title
    is usually an alternative one.
    """
    alts = list(alt_titles)
    for language in languages:
        for entry in (names, *alts):
            if entry.get(language, "").strip():
                return entry[language].strip()
    for value in names.values():
        if value.strip():
            return value.strip()
    for entry in alts:
        for value in entry.values():
            if value.strip():
                return value.strip()
    return ""


def other_titles(
    names: Mapping[str, str], alt_titles: Iterable[Mapping[str, str]], languages: tuple[str, ...], chosen: str
) -> tuple[str, ...]:
    """Every other title in the reader's languages, the main title first, each once."""
    seen = {chosen}
    found = []
    for entry in (names, *alt_titles):
        for language, value in entry.items():
            text = value.strip()
            if language in languages and text and text not in seen:
                seen.add(text)
                found.append(text)
    return tuple(found)


def localized(text: Mapping[str, str] | None, languages: tuple[str, ...]) -> str:
    """A localized string in the first of `languages` it has, else English, else empty."""
    text = text or {}
    for language in (*languages, "en"):
        if text.get(language, "").strip():
            return text[language].strip()
    return ""


def _related(manga: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [r for r in manga.get("relationships") or () if r.get("type") == kind]


def manga_ref(manga: Mapping[str, Any], languages: tuple[str, ...]) -> SourceMangaRef:
    manga_id = _required(manga, "id")
    attributes = manga.get("attributes") or {}
    title = pick_title(attributes.get("title") or {}, attributes.get("altTitles") or (), languages)
    return SourceMangaRef(key=manga_id, url=f"{SITE}/title/{manga_id}", title=title or manga_id)


def manga_metadata(manga: Mapping[str, Any], languages: tuple[str, ...]) -> MangaMetadata:
    """Title, other titles, description, authors and artists (each once), status and tags of a manga."""
    attributes = manga.get("attributes") or {}
    names, alts = attributes.get("title") or {}, attributes.get("altTitles") or ()
    title = pick_title(names, alts, languages) or _required(manga, "id")
    people = [
        (r.get("attributes") or {}).get("name", "").strip()
        for r in (*_related(manga, "author"), *_related(manga, "artist"))
    ]
    tags = [localized((t.get("attributes") or {}).get("name"), languages) for t in attributes.get("tags") or ()]
    status = attributes.get("status") or "unknown"
    return MangaMetadata(
        title=title,
        alt_titles=other_titles(names, alts, languages, title),
        description=localized(attributes.get("description"), languages),
        authors=tuple(dict.fromkeys(p for p in people if p)),
        status=status if status in STATUSES else "unknown",
        tags=tuple(dict.fromkeys(t for t in tags if t)),
    )


def cover_url(manga: Mapping[str, Any], uploads_url: str) -> str:
    """`{uploads}/covers/{manga id}/{file name}` of the expanded cover_art relationship, or "" when none."""
    for cover in _related(manga, "cover_art"):
        name = (cover.get("attributes") or {}).get("fileName")
        if name:
            return f"{uploads_url}/covers/{_required(manga, 'id')}/{name}"
    return ""


def chapter_number(text: str | None) -> tuple[Decimal, str]:
    """MangaDex's `chapter` string as (number, kind): a oneshot (null) is chapter 0, a word ("Extra") an extra."""
    if text is None or not text.strip():
        return Decimal(0), "chapter"
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return Decimal(0), "extra"
    return (number, "chapter") if number.is_finite() and number >= 0 else (Decimal(0), "extra")


def _volume(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None


def _published(text: str | None, notes: FeedNotes) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        notes.unparsed_dates += 1
        if len(notes.examples) < 3:
            notes.examples.append(text)
        return None


def feed_chapter(chapter: Mapping[str, Any], notes: FeedNotes) -> SourceChapter | None:
    """One feed entry as a chapter to crawl, or None (counted in `notes`) when MangaDex serves no pages for it."""
    attributes = chapter.get("attributes") or {}
    if attributes.get("externalUrl"):
        notes.external_chapters += 1
        return None
    # `isUnavailable` is newer than the 5.10.0 description; a chapter of 0 pages has nothing to read either.
    if attributes.get("isUnavailable") or attributes.get("pages") == 0:
        notes.unavailable_chapters += 1
        return None
    chapter_id = _required(chapter, "id")
    number, kind = chapter_number(attributes.get("chapter"))
    title = (attributes.get("title") or "").strip()
    if kind == "extra" and not title:
        title = str(attributes.get("chapter")).strip()
    return SourceChapter(
        key=chapter_id,
        number=number,
        title=title,
        url=f"{SITE}/chapter/{chapter_id}",
        published_at=_published(attributes.get("publishAt"), notes),
        kind=kind,
        volume=_volume(attributes.get("volume")),
    )


def collection_page(answer: Mapping[str, Any], what: str) -> tuple[list[Mapping[str, Any]], int]:
    """A collection answer's entries and its `total`; AnswerUnreadable when it is not one."""
    data, total = answer.get("data"), answer.get("total")
    if answer.get("result") != "ok" or not isinstance(data, list) or not isinstance(total, int):
        raise AnswerUnreadable(f"{what} is not a MangaDex collection (result {answer.get('result')!r})")
    return data, total


def next_offset(offset: int, served: int, total: int, *, window: int) -> int | None:
    """Where the next page starts, or None at the end.

    Paged by what was served, not by the limit asked: the API may serve fewer
    entries than asked, and it reads no further than `window` entries
    (offset + limit; 10,000 for /manga).
    """
    nxt = offset + served
    if served == 0 or nxt >= min(total, window):
        return None
    return nxt


def page_urls(answer: Mapping[str, Any], *, data_saver: bool) -> list[str]:
    """The at-home answer's image URLs: `{baseUrl}/data/{hash}/{file}` (or `data-saver` with dataSaver)."""
    base, chapter = answer.get("baseUrl"), answer.get("chapter") or {}
    files, digest = chapter.get("dataSaver" if data_saver else "data"), chapter.get("hash")
    if not isinstance(base, str) or not isinstance(digest, str) or not isinstance(files, list):
        raise AnswerUnreadable(
            f"the at-home answer has no baseUrl, hash or file list (result {answer.get('result')!r})"
        )
    folder = "data-saver" if data_saver else "data"
    return [f"{base.rstrip('/')}/{folder}/{digest}/{name}" for name in files]


def is_at_home_image(url: str, uploads_url: str) -> bool:
    """An image served by a MangaDex@Home node: the ones MangaDex asks to hear about (not its own uploads host)."""
    return ("/data/" in url or "/data-saver/" in url) and not url.startswith(uploads_url + "/")


def at_home_report(url: str, *, success: bool, cached: bool, size: int, duration_ms: int) -> dict[str, Any]:
    """The body of POST {report_url}: what MangaDex asks for after each at-home image (api.mangadex.org/docs,
    "MangaDex@Home load successes, failures and retries")."""
    return {"url": url, "success": success, "cached": cached, "bytes": size, "duration": duration_ms}


def _required(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise AnswerUnreadable(f"a MangaDex record has no {key!r}")
    return value
