"""Reading JSON answers the way `parsing` reads HTML: list items, chapters, page images, totals, captured values.

Pure functions over an already decoded JSON value (`decode_answer`) and the
answer's URL, so every family's shapes are tested without a server. Items
are found by JSONPath (`list_anchor: "$.posts[*]"`); what each item yields
is a value spec or a template over it (`list_link: "/series/{$.slug}"`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from catalog.chapter_numbers import CHAPTER, ChapterName
from sources import fields
from sources.base import SourceMangaRef
from sources.config import DEFAULT_NUMBER_PATTERN, HtmlSourceConfig
from sources.page_images import image_from_value
from sources.parsing import (
    ChapterParse,
    ParseNotes,
    _chapter_date,
    chapter_name,
    finish_chapters,
    is_skipped,
    key_from_url,
    unique_refs,
    with_suffix,
)

logger = logging.getLogger(__name__)

_JSON_TYPES = ("application/json", "text/json", "application/javascript", "text/javascript")


class NotJson(ValueError):
    """The answer was to be JSON and is not."""


def decode_answer(text: str, content_type: str) -> Any:
    """The JSON value of an answer said (or seen) to be JSON; NotJson otherwise.

    Some servers label JSON as text/html or text/plain: a body that starts
    like JSON is read as JSON whatever its label.
    """
    body = text.lstrip("\ufeff \t\r\n")
    if content_type not in _JSON_TYPES and not content_type.endswith("+json") and body[:1] not in ("{", "["):
        raise NotJson(f"answered {content_type or 'no media type'}, not JSON")
    try:
        return json.loads(body)
    except ValueError as exc:
        raise NotJson(f"answered text that is not JSON ({exc})") from exc


def total_of(doc: Any, spec: str | None) -> int | None:
    """The whole count a list answer states (`list_total`, `chapter_list_total`), when it states one."""
    if not spec:
        return None
    text = fields.parse_value_spec(spec).first(doc)
    try:
        return int(float(text))
    except ValueError:
        return None


def parse_json_list(
    data: Any, page_url: str, config: HtmlSourceConfig, values: Mapping[str, object]
) -> tuple[list[SourceMangaRef], int]:
    """Refs from a JSON list answer (`list_anchor` items, `list_link` and `list_title` on each), and the drop count."""
    assert config.list_link is not None  # checked with the settings (list_link is required with a JSON list)
    title_spec = fields.parse_value_spec(config.list_title)
    found = []
    items = fields.json_values(data, config.list_anchor)
    if config.list_sort:
        # Newest first, as the metadata pass walks (it stops at the first manga with nothing new); items
        # without the value go last. ISO dates and numbers compare as their text does once padded.
        sort_spec = fields.parse_value_spec(config.list_sort)
        items = sorted(items, key=lambda item: _sort_key(sort_spec.first(item)), reverse=True)
    for item in items:
        link = fields.fill(config.list_link, values, item)
        found.append((urljoin(page_url, link) if link else "", title_spec.first(item)))
    refs, dropped = unique_refs(found, config.manga_key_pattern)
    if dropped:
        logger.warning("manga list %s: dropped %d JSON item(s) without a link or title", page_url, dropped)
    return refs, dropped


def _sort_key(value: str) -> tuple[int, float, str]:
    """Numbers by value, other text (ISO dates) as text; a missing value sorts below everything."""
    if not value:
        return (0, 0.0, "")
    try:
        return (1, float(value), "")
    except ValueError:
        return (2, 0.0, value)


def parse_json_chapters(
    data: Any,
    base_url: str,
    config: HtmlSourceConfig,
    values: Mapping[str, object],
    *,
    notes: ParseNotes | None = None,
) -> ChapterParse:
    """Chapters of a JSON answer (`chapter_item` items), like `parse_chapter_items` reads HTML ones."""
    assert config.chapter_link_url is not None  # required with a JSON chapter_item
    number_pattern = None
    if config.chapter_number_pattern != DEFAULT_NUMBER_PATTERN:
        number_pattern = re.compile(config.chapter_number_pattern)
    title_spec = config.spec("chapter_title")
    found: dict[str, tuple[ChapterName, str, dt.datetime | None]] = {}
    dropped = skipped = 0
    items = fields.json_values(data, config.chapter_item)
    for item in items:
        if is_skipped(item, config):
            skipped += 1
            continue
        link = fields.fill(config.chapter_link_url, values, item)
        url = with_suffix(urljoin(base_url, link), config.chapter_url_suffix) if link else ""
        if config.chapter_key:
            key = fields.fill(config.chapter_key, values, item)
        else:
            key = key_from_url(url, config.chapter_key_pattern, whole_path=True) if url else None
        name = chapter_name(title_spec.first(item) if title_spec else "", item, config, number_pattern)
        if not url or not key or (name.number is None and name.kind == CHAPTER):
            dropped += 1
            continue
        if key not in found:
            found[key] = (name, url, _chapter_date(item, config, notes) if config.chapter_date else None)
    return finish_chapters(found, len(items), base_url, dropped=dropped, skipped=skipped)


def json_page_images(data: Any, page_url: str, config: HtmlSourceConfig, values: Mapping[str, object]) -> list[str]:
    """Image URLs of a JSON chapter answer (`page_image` values, through `page_image_url` when set)."""
    assert config.page_image is not None
    urls = []
    for value in fields.json_values(data, config.page_image):
        text = value if isinstance(value, str) else ""
        if isinstance(value, dict):  # [{"url": ...}] lists: the first image attribute the item has
            text = next((str(value[a]) for a in config.image_attrs if value.get(a)), "")
        if text:
            urls.append(image_from_value(text.strip(), page_url, config, values))
    return list(dict.fromkeys(u for u in urls if u))
