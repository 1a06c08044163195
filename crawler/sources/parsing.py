"""HTML parsing shared by the adapters: list anchors, manga detail, chapter images, login wall.

Pure functions over HTML text and a base URL (for resolving relative
links), so they are tested without any server.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from decimal import Decimal, InvalidOperation
from urllib.parse import urljoin, urlsplit

from selectolax.parser import HTMLParser, Node

from crawler.errors import CrawlerError
from crawler.sources.base import MangaDetail, MangaMetadata, SourceChapter, SourceMangaRef
from crawler.sources.config import DEFAULT_NUMBER_PATTERN, HtmlSourceConfig

logger = logging.getLogger(__name__)

DEFAULT_LIST_SELECTOR = "a.manga-link"
_STATUS_WORDS = {
    "ongoing": "ongoing", "publishing": "ongoing", "releasing": "ongoing",
    "completed": "completed", "complete": "completed", "finished": "completed", "ended": "completed",
    "hiatus": "hiatus", "on hold": "hiatus", "paused": "hiatus",
    "cancelled": "cancelled", "canceled": "cancelled", "dropped": "cancelled", "discontinued": "cancelled",
}  # fmt: skip


def key_from_url(url: str, pattern: str | None) -> str | None:
    """The item key: `pattern`'s group searched in the URL path, else the last path segment."""
    path = urlsplit(url).path
    if pattern:
        match = re.search(pattern, path)
        return match.group(1) if match and match.group(1) else None
    segments = [s for s in path.split("/") if s]
    return segments[-1] if segments else None


def parse_manga_list_anchors(
    html: str, base_url: str, selector: str = DEFAULT_LIST_SELECTOR, *, key_pattern: str | None = None
) -> tuple[list[SourceMangaRef], int]:
    """Refs from a list page's anchors, in page order, and how many anchors were dropped.

    An anchor with a missing/empty href or title (or a href the key pattern
    cannot read) is dropped; the drop count is logged as a warning so source
    markup drift shows up instead of silently shrinking the crawl. The refs
    returned are exactly those the anchors yield (duplicates by key collapse
    to the first).
    """
    refs: list[SourceMangaRef] = []
    seen: set[str] = set()
    dropped = 0
    for anchor in HTMLParser(html).css(selector):
        href = (anchor.attributes.get("href") or "").strip()
        title = (anchor.attributes.get("title") or "").strip()
        url = urljoin(base_url, href) if href else ""
        key = key_from_url(url, key_pattern) if url else None
        if not href or not title or not key:
            dropped += 1
            continue
        if key not in seen:
            seen.add(key)
            refs.append(SourceMangaRef(key=key, url=url, title=title))
    if dropped:
        logger.warning(
            "manga list %s: dropped %d anchor(s) matching %r with a missing/empty href or title (kept %d)",
            base_url,
            dropped,
            selector,
            len(refs),
        )
    return refs, dropped


def has_match(html: str, selector: str) -> bool:
    return HTMLParser(html).css_first(selector) is not None


def normalise_status(text: str) -> str:
    return _STATUS_WORDS.get(" ".join(text.lower().split()), "unknown")


def _texts(tree: Node | HTMLParser, selector: str | None) -> tuple[str, ...]:
    if not selector:
        return ()
    texts = (node.text(separator=" ", strip=True) for node in tree.css(selector))
    return tuple(dict.fromkeys(" ".join(t.split()) for t in texts if t.strip()))


def _first_text(tree: Node | HTMLParser, selector: str | None) -> str:
    found = _texts(tree, selector)
    return found[0] if found else ""


def _image_url(node: Node, attrs: tuple[str, ...], base_url: str) -> str | None:
    for attr in attrs:
        value = (node.attributes.get(attr) or "").strip()
        if value and not value.startswith("data:"):
            return urljoin(base_url, value)
    return None


def _parse_datetime(node: Node | None) -> dt.datetime | None:
    if node is None:
        return None
    raw = (node.attributes.get("datetime") or node.text(strip=True) or "").strip()
    try:
        parsed = dt.datetime.fromisoformat(raw)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def parse_chapters(html: str, base_url: str, config: HtmlSourceConfig) -> tuple[SourceChapter, ...]:
    """Chapters of a detail page in ascending number; items without a link or a number are dropped (and logged)."""
    number_pattern = re.compile(config.chapter_number_pattern or DEFAULT_NUMBER_PATTERN)
    chapters: dict[str, SourceChapter] = {}
    dropped = 0
    for item in HTMLParser(html).css(config.chapter_item):
        # chapter_item may itself be the anchor (e.g. "ul.chapters > a").
        link = item.css_first(config.chapter_link) or (item if item.tag == "a" else None)
        href = (link.attributes.get("href") or "").strip() if link else ""
        text = " ".join(link.text(separator=" ", strip=True).split()) if link else ""
        url = urljoin(base_url, href) if href else ""
        key = key_from_url(url, config.chapter_key_pattern) if url else None
        match = number_pattern.search(text)
        try:
            number = Decimal(match.group(1)) if match else None
        except InvalidOperation:
            number = None
        if not key or number is None:
            dropped += 1
            continue
        published = _parse_datetime(item.css_first(config.chapter_date)) if config.chapter_date else None
        chapters.setdefault(key, SourceChapter(key=key, number=number, title=text, url=url, published_at=published))
    if dropped:
        logger.warning("manga detail %s: dropped %d chapter item(s) without a link or number", base_url, dropped)
    return tuple(sorted(chapters.values(), key=lambda c: (c.number, c.key)))


def parse_manga_detail(html: str, base_url: str, config: HtmlSourceConfig) -> MangaDetail:
    tree = HTMLParser(html)
    title = _first_text(tree, config.title)
    if not title:
        raise CrawlerError(f"manga detail {base_url}: the title selector {config.title!r} matched nothing")
    cover_node = tree.css_first(config.cover) if config.cover else None
    cover_url = _image_url(cover_node, config.image_attrs, base_url) if cover_node else None
    metadata = MangaMetadata(
        title=title,
        alt_titles=tuple(t for t in _texts(tree, config.alt_titles) if t != title),
        description=" ".join(_texts(tree, config.description)),
        authors=_texts(tree, config.authors),
        status=normalise_status(_first_text(tree, config.status)),
        tags=_texts(tree, config.tags),
    )
    return MangaDetail(metadata=metadata, cover_url=cover_url or "", chapters=parse_chapters(html, base_url, config))


def parse_page_images(html: str, base_url: str, config: HtmlSourceConfig) -> list[str]:
    """Absolute image URLs of a chapter's pages in reading order (duplicates collapse)."""
    urls = (_image_url(node, config.image_attrs, base_url) for node in HTMLParser(html).css(config.page_image))
    return list(dict.fromkeys(u for u in urls if u))
