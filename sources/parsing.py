"""HTML parsing shared by the adapters: list anchors, manga detail, chapters, login wall (chapter images: `page_images`).

Pure functions over HTML text and a base URL (for resolving relative
links), so they are tested without any server. Selectors and field specs use
the dialect of `sources.selectors`.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any
from urllib.parse import urljoin, urlsplit

from selectolax.parser import HTMLParser, Node

from catalog.chapter_numbers import CHAPTER, ChapterName, classify, number_extras, with_pattern
from sources import fields, selectors
from sources.base import MangaMetadata, SourceChapter, SourceMangaRef
from sources.config import DEFAULT_NUMBER_PATTERN, HtmlSourceConfig
from sources.dates import parse_date, utc_offset
from sources.errors import CrawlerError
from sources.page_images import image_url
from sources.statuses import status_of

logger = logging.getLogger(__name__)

DEFAULT_LIST_SELECTOR = "a.manga-link"
_TITLE_SPEC = selectors.FieldSpec(selector=None, attr="title")


MAX_DATE_SAMPLES = 50


@dataclass
class ParseNotes:
    """What parsing had to skip, kept per adapter so a pass can count and warn once."""

    unparsed_dates: int = 0
    unparsed_examples: list[str] = field(default_factory=list)
    # The first dates as printed, parsed or not: add_source reads a site's numeric date order off them.
    date_samples: list[str] = field(default_factory=list)

    def date_seen(self, text: str) -> None:
        if len(self.date_samples) < MAX_DATE_SAMPLES:
            self.date_samples.append(text)

    def date_failed(self, text: str) -> None:
        self.unparsed_dates += 1
        if len(self.unparsed_examples) < 3:
            self.unparsed_examples.append(text)


def key_from_url(url: str, pattern: str | None, *, whole_path: bool = False) -> str | None:
    """The item key: `pattern`'s group searched in the URL path, else the last path segment (or the whole path).

    Chapter keys default to the whole path ("manga/slug/chapter-1"): sites
    number chapters "chapter-1" under every manga, and keys are unique per source.
    """
    path = urlsplit(url).path
    if pattern:
        match = re.search(pattern, path)
        return match.group(1) if match and match.group(1) else None
    segments = [s for s in path.split("/") if s]
    if not segments:
        return None
    return "/".join(segments) if whole_path else segments[-1]


def parse_manga_list_anchors(
    html: str,
    base_url: str,
    selector: str = DEFAULT_LIST_SELECTOR,
    *,
    key_pattern: str | None = None,
    title_spec: selectors.FieldSpec = _TITLE_SPEC,
) -> tuple[list[SourceMangaRef], int]:
    """Refs from a list page's anchors, in page order, and how many anchors were dropped.

    An anchor with a missing/empty href or title (or a href the key pattern
    cannot read) is dropped; the drop count is logged as a warning so source
    markup drift shows up instead of silently shrinking the crawl. The refs
    returned are exactly those the anchors yield (duplicates by key collapse
    to the first).
    """
    found = []
    for anchor in selectors.select(HTMLParser(html), selector):
        href = (anchor.attributes.get("href") or "").strip()
        found.append((urljoin(base_url, href) if href else "", title_spec.first(anchor)))
    refs, dropped = unique_refs(found, key_pattern)
    if dropped:
        logger.warning(
            "manga list %s: dropped %d anchor(s) matching %r with a missing/empty href or title (kept %d)",
            base_url,
            dropped,
            selector,
            len(refs),
        )
    return refs, dropped


def unique_refs(found: Iterable[tuple[str, str]], key_pattern: str | None) -> tuple[list[SourceMangaRef], int]:
    """Refs from (absolute URL, title) pairs in list order: unusable ones counted, repeated keys kept once."""
    refs: list[SourceMangaRef] = []
    seen: set[str] = set()
    dropped = 0
    for url, title in found:
        key = key_from_url(url, key_pattern) if url else None
        if not title or not key:
            dropped += 1
            continue
        if key not in seen:
            seen.add(key)
            refs.append(SourceMangaRef(key=key, url=url, title=title))
    return refs, dropped


def has_match(html: str, selector: str) -> bool:
    return selectors.has_match(html, selector)


def _values(tree: Any, config: HtmlSourceConfig, name: str) -> tuple[str, ...]:
    spec = config.spec(name)
    return tuple(dict.fromkeys(spec.values(tree))) if spec else ()


def _first(tree: Any, config: HtmlSourceConfig, name: str) -> str:
    found = _values(tree, config, name)
    return found[0] if found else ""


def parse_alt_titles(values: Iterable[str], separator: str | None, title: str) -> tuple[str, ...]:
    parts = (p.strip() for v in values for p in (re.split(separator, v) if separator else [v]))
    return tuple(dict.fromkeys(p for p in parts if p and p != title))


def _chapter_date(item: Any, config: HtmlSourceConfig, notes: ParseNotes | None) -> dt.datetime | None:
    tried = ""
    for raw in config.chapter_date:
        text = _date_text(item, raw)
        if not text:
            continue
        if not tried and notes is not None:
            notes.date_seen(text)
        tried = tried or text
        parsed = parse_date(
            text, formats=config.chapter_date_formats, language=config.date_language, zone=site_zone(config)
        )
        if parsed is not None:
            return parsed
    if tried and notes is not None:
        notes.date_failed(tried)
    return None


def site_zone(config: HtmlSourceConfig) -> dt.tzinfo:
    return (utc_offset(config.date_utc_offset) if config.date_utc_offset else None) or dt.UTC


def _date_text(item: Any, raw: str) -> str:
    """The spec's value; an element's `datetime` attribute (a <time>) wins over its text unless told otherwise."""
    value_spec = fields.parse_value_spec(raw)
    if value_spec.reader != "css" or value_spec.steps:
        return value_spec.first(item)
    spec = selectors.parse_spec(raw)
    if spec.attr is None and not spec.own_text and spec.selector is not None:
        node = selectors.select_first(item, spec.selector)
        if node is not None and (node.attributes.get("datetime") or "").strip():
            return (node.attributes.get("datetime") or "").strip()
    return spec.first(item)


def with_suffix(url: str, suffix: str | None) -> str:
    """Madara's `?style=list`: appended unless present; a `?style=paged` view is replaced."""
    if not suffix or url.endswith(suffix):
        return url
    if suffix.startswith("?") and "?" in url:
        base, _, query = url.partition("?")
        name = suffix[1:].split("=", 1)[0]
        kept = [p for p in query.split("&") if p and p.split("=", 1)[0] != name]
        return base + suffix + "".join("&" + p for p in kept)
    return url + suffix


@dataclass(frozen=True)
class ChapterParse:
    chapters: tuple[SourceChapter, ...]
    items: int  # chapter_item matches, kept or not
    skipped: int = 0  # items chapter_skip left out (locked or paid)


def parse_chapter_items(
    html: str, base_url: str, config: HtmlSourceConfig, *, notes: ParseNotes | None = None
) -> ChapterParse:
    """Chapters in reading order and how many items matched; items without a link or number are dropped (logged)."""
    # The generic reading (catalog.chapter_numbers) numbers chapters unless the site's config brings its own pattern.
    number_pattern = None
    if config.chapter_number_pattern and config.chapter_number_pattern != DEFAULT_NUMBER_PATTERN:
        number_pattern = re.compile(config.chapter_number_pattern)
    title_spec = config.spec("chapter_title")
    found: dict[str, tuple[ChapterName, str, dt.datetime | None]] = {}
    dropped = skipped = 0
    items = selectors.select(HTMLParser(html), config.chapter_item)
    for item in items:
        if is_skipped(item, config):
            skipped += 1
            continue
        # chapter_item may itself be the anchor (e.g. "ul.chapters > a").
        link = selectors.select_first(item, config.chapter_link) or (item if item.tag == "a" else None)
        href = (link.attributes.get("href") or "").strip() if link else ""
        text = title_spec.first(item) if title_spec else ""
        if not text and not config.chapter_number:
            # With chapter_number the link's text is no title (MMRCMS prints "{manga title} {n}" there).
            text = selectors.read(link) if link else ""
        url = with_suffix(urljoin(base_url, href), config.chapter_url_suffix) if href else ""
        key = key_from_url(url, config.chapter_key_pattern, whole_path=True) if url else None
        name = chapter_name(text, item, config, number_pattern)
        if not key or (name.number is None and name.kind == CHAPTER):
            dropped += 1
            continue
        if key not in found:
            found[key] = (name, url, _chapter_date(item, config, notes) if config.chapter_date else None)
    return finish_chapters(found, len(items), base_url, dropped=dropped, skipped=skipped)


def is_skipped(item: Any, config: HtmlSourceConfig) -> bool:
    """Whether `chapter_skip` marks the item (a locked or paid chapter): any of its specs yields a value."""
    return any(fields.parse_value_spec(spec).first(item) for spec in config.chapter_skip)


def chapter_name(text: str, item: Any, config: HtmlSourceConfig, number_pattern: re.Pattern[str] | None) -> ChapterName:
    """The chapter's kind, number and own title from its printed text (and `chapter_number`, when the site
    gives the number apart: a JSON chapter's `number` field)."""
    number_spec = config.spec("chapter_number")
    number_text = number_spec.first(item) if number_spec else ""
    if not text and number_text:
        text = f"Chapter {number_text}"
    # "Chapter 12 - The Gate" -> chapter 12 "The Gate"; "Side Story 3" -> extra 3: readers add labels themselves.
    name = classify(text)
    if number_pattern is not None:
        name = with_pattern(name, text, number_pattern)
    if number_text and name.kind == CHAPTER:
        try:
            number = Decimal(number_text)
        except ArithmeticError:
            return name
        if number.is_finite() and number != name.number:
            name = replace(name, number=number)
    return name


def finish_chapters(
    found: dict[str, tuple[ChapterName, str, dt.datetime | None]],
    items: int,
    base_url: str,
    *,
    dropped: int,
    skipped: int,
) -> ChapterParse:
    """The chapters found, extras numbered, in reading order; what was dropped or skipped is logged."""
    if dropped:
        logger.warning("manga detail %s: dropped %d chapter item(s) without a link or number", base_url, dropped)
    if skipped:
        logger.info("manga detail %s: skipped %d locked or paid chapter(s) (chapter_skip)", base_url, skipped)
    # Every extra has a number once numbered in its list; a main chapter without one was dropped above.
    names = number_extras([name for name, _, _ in found.values()])
    chapters = [
        SourceChapter(
            key=key,
            number=name.number if name.number is not None else Decimal(0),
            title=name.title,
            url=url,
            published_at=published,
            kind=name.kind,
            volume=name.volume,
        )
        for (key, (_, url, published)), name in zip(found.items(), names, strict=True)
    ]
    return ChapterParse(tuple(sorted(chapters, key=_reading_order)), items, skipped)


def _reading_order(chapter: SourceChapter) -> tuple[object, ...]:
    return (chapter.kind, chapter.volume is None, chapter.volume or 0, chapter.number, chapter.key)


def parse_manga_metadata(html: str, base_url: str, config: HtmlSourceConfig) -> tuple[MangaMetadata, str]:
    """The manga's metadata and cover URL ("" when none)."""
    return manga_metadata(HTMLParser(html), base_url, config)


def manga_metadata(tree: Any, base_url: str, config: HtmlSourceConfig) -> tuple[MangaMetadata, str]:
    """The manga's metadata and cover URL from a parsed answer: an HTML tree, or a JSON value (JSON paths)."""
    title = _first(tree, config, "title")
    if not title:
        raise CrawlerError(f"manga detail {base_url}: the title selector {config.title!r} matched nothing")
    cover_url: str | None = None
    if config.cover and (config.reads_json("cover") or config.cover.startswith("re:") or " | " in config.cover):
        found = fields.parse_value_spec(config.cover).first(tree)
        cover_url = urljoin(base_url, found) if found else None
    elif config.cover and isinstance(tree, HTMLParser | Node):
        cover_node = selectors.select_first(tree, config.cover)
        cover_url = image_url(cover_node, config.image_attrs, base_url) if cover_node else None
    metadata = MangaMetadata(
        title=title,
        alt_titles=parse_alt_titles(_values(tree, config, "alt_titles"), config.alt_titles_separator, title),
        description=" ".join(_values(tree, config, "description")),
        authors=_values(tree, config, "authors"),
        status=status_of(_values(tree, config, "status")),
        tags=_values(tree, config, "tags"),
    )
    return metadata, cover_url or ""
