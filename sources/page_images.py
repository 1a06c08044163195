"""A chapter's page images: from the reader's <img> elements, a `page_image_url` template, or an inline script.

Apart from `sources.parsing` because reading images is its own
concern with its own rules (a srcset's widest candidate, lazy-load
attributes tried in order with data: placeholders skipped, a script's array
found by regex and read as JavaScript), and the cover on a detail page is
read by the same `image_url`. Pure functions over HTML text and a base URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import chompjs
from selectolax.parser import HTMLParser, Node

from sources import fields, selectors

if TYPE_CHECKING:
    from sources.config import HtmlSourceConfig

_SRCSET_DESCRIPTOR = re.compile(r"^(\d+(?:\.\d+)?)([wx])$")


def largest_srcset_candidate(srcset: str) -> str | None:
    """The URL of the widest (or highest-density) `srcset` candidate; a bare URL counts as 1x."""
    best: tuple[float, str] | None = None
    for candidate in srcset.split(","):
        parts = candidate.split()
        if not parts:
            continue
        size = 1.0
        if len(parts) > 1 and (match := _SRCSET_DESCRIPTOR.match(parts[-1])):
            size = float(match.group(1))
        if best is None or size > best[0]:
            best = (size, parts[0])
    return best[1] if best else None


def image_url(node: Node, attrs: Iterable[str], base_url: str) -> str | None:
    """The first usable image URL among `attrs` (data: placeholders skipped), resolved against `base_url`."""
    for attr in attrs:
        value = (node.attributes.get(attr) or "").strip()
        if attr == "srcset" and value:
            value = largest_srcset_candidate(value) or ""
        if value and not value.startswith("data:"):
            return urljoin(base_url, value)
    return None


def parse_page_images(
    html: str, base_url: str, config: HtmlSourceConfig, values: Mapping[str, object] | None = None
) -> list[str]:
    """Absolute image URLs of a chapter's pages in reading order (duplicates collapse).

    The reader's <img> elements first; when they yield nothing and
    `page_script` is set, the URL array from the inline script. With
    `page_image_url`, what image_attrs read is the template's {value} and
    `values` (page_captures) fill the rest: Keyoapp's "{cdn}/uploads/{value}".
    """
    tree = HTMLParser(html)
    urls: list[str | None] = []
    if config.page_image and config.page_image_url:
        captured = values if values is not None else fields.capture_values(tree, config.page_captures)
        for node in selectors.select(tree, config.page_image):
            raw = next((v for a in config.image_attrs if (v := (node.attributes.get(a) or "").strip())), "")
            urls.append(image_from_value(raw, base_url, config, captured) if raw else None)
    elif config.page_image:
        urls = [image_url(node, config.image_attrs, base_url) for node in selectors.select(tree, config.page_image)]
    found = list(dict.fromkeys(u for u in urls if u))
    if not found and config.page_script:
        found = list(dict.fromkeys(script_images(tree, config.page_script, config.page_script_path, base_url)))
    return found


def script_images(tree: HTMLParser, pattern: str, path: str | None, base_url: str) -> list[str]:
    """Image URLs from the first inline script where `pattern` matches and its value parses."""
    compiled = re.compile(pattern, re.DOTALL)
    for text in selectors.iter_scripts(tree):
        match = compiled.search(text)
        if not match:
            continue
        try:
            value: Any = chompjs.parse_js_object(text[match.start(1) :])
        except ValueError:
            continue
        if path and path.startswith("$"):
            found = [v for v in fields.json_values(value, path) if isinstance(v, str) and v.strip()]
            if found:
                return [urljoin(base_url, v.strip()) for v in found]
            continue
        for step in path.split(".") if path else ():
            if isinstance(value, list) and step.isascii() and step.isdigit() and int(step) < len(value):
                value = value[int(step)]
            elif isinstance(value, dict) and step in value:
                value = value[step]
            else:
                value = None
                break
        if isinstance(value, list):
            return [urljoin(base_url, v.strip()) for v in value if isinstance(v, str) and v.strip()]
    return []


def image_from_value(value: str, page_url: str, config: HtmlSourceConfig, values: Mapping[str, object]) -> str:
    """An image URL from what the page gave (an attribute, a JSON string), through `page_image_url` when set."""
    if config.page_image_url:
        value = fields.fill(config.page_image_url, {**values, "value": value}) or ""
    return urljoin(page_url, value.replace(" ", "%20")) if value else ""
