"""Settings of the selector-configured `html` adapter, validated from a Source row's `settings` JSON.

Every key is checked up front (type, CSS selector syntax, regex, URL
template) so a typo fails with an error naming the key rather than as an
empty crawl hours later. Unknown keys are errors too.

Keys (selectors are CSS; `chapter_link` and `chapter_date` are relative to
each `chapter_item`):

    list_url              required  URL template with {page}, absolute or relative to base_url
    list_anchor           required  list anchors; href and title attributes become refs
    list_next             optional  "next page" link; absent = a non-empty page means there may be more
    manga_key_pattern     optional  regex with one group, searched in the manga URL's path
    title                 required
    alt_titles, description, authors, status, tags, cover   optional
    chapter_item          required
    chapter_link          optional  default "a"
    chapter_date          optional  element with a datetime attribute (or ISO text)
    chapter_key_pattern   optional  regex with one group, searched in the chapter URL's path
    chapter_number_pattern optional regex with one group, searched in the link text
    page_image            required  the reader's <img> elements
    image_attrs           optional  attributes holding image URLs, first present wins
    requires_browser      optional  load pages through the shared Chromium
    image_hosts           optional  extra hosts images may come from (cdn.example.com[:port], *.example.com)
    session_cookie        optional  cookie name of the operator's session, default PHPSESSID
    login_wall_selector   optional  matches only on the site's login form (= session expired)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from selectolax.parser import HTMLParser

from crawler.errors import SourceConfigError
from crawler.sources.hosts import parse_host_rule

DEFAULT_NUMBER_PATTERN = r"(\d+(?:\.\d+)?)"
_COOKIE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PROBE = HTMLParser("<p></p>")


@dataclass(frozen=True)
class HtmlSourceConfig:
    list_url: str
    list_anchor: str
    title: str
    chapter_item: str
    page_image: str
    list_next: str | None = None
    manga_key_pattern: str | None = None
    alt_titles: str | None = None
    description: str | None = None
    authors: str | None = None
    status: str | None = None
    tags: str | None = None
    cover: str | None = None
    chapter_link: str = "a"
    chapter_date: str | None = None
    chapter_key_pattern: str | None = None
    chapter_number_pattern: str = DEFAULT_NUMBER_PATTERN
    image_attrs: tuple[str, ...] = ("data-src", "src")
    requires_browser: bool = False
    image_hosts: tuple[str, ...] = ()
    session_cookie: str = "PHPSESSID"
    login_wall_selector: str | None = None

    @classmethod
    def from_settings(cls, data: Any, *, source_id: str) -> HtmlSourceConfig:
        """Validate a settings dict; raise SourceConfigError naming the first bad key."""
        if not isinstance(data, dict):
            raise SourceConfigError(f"source {source_id!r}: settings must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SourceConfigError(f"source {source_id!r}: unknown settings key {unknown[0]!r}")
        missing = [f.name for f in fields(cls) if f.name in _REQUIRED and f.name not in data]
        if missing:
            raise SourceConfigError(f"source {source_id!r}: settings key {missing[0]!r} is required")
        values = {name: _validate(source_id, name, value) for name, value in data.items()}
        return cls(**values)


_REQUIRED = {"list_url", "list_anchor", "title", "chapter_item", "page_image"}
_SELECTORS = {
    "list_anchor", "list_next", "title", "alt_titles", "description", "authors", "status", "tags", "cover",
    "chapter_item", "chapter_link", "chapter_date", "page_image", "login_wall_selector",
}  # fmt: skip
_PATTERNS = {"manga_key_pattern", "chapter_key_pattern", "chapter_number_pattern"}
_OPTIONAL_NONE = {
    "list_next", "manga_key_pattern", "alt_titles", "description", "authors", "status", "tags", "cover",
    "chapter_date", "chapter_key_pattern", "login_wall_selector",
}  # fmt: skip


def _validate(source_id: str, name: str, value: Any) -> Any:
    def bad(why: str) -> SourceConfigError:
        return SourceConfigError(f"source {source_id!r}: settings key {name!r} {why}")

    if value is None and name in _OPTIONAL_NONE:
        return None
    if name == "requires_browser":
        if not isinstance(value, bool):
            raise bad("must be true or false")
        return value
    if name in ("image_attrs", "image_hosts"):
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise bad("must be a list of non-empty strings")
        if name == "image_attrs" and not value:
            raise bad("must name at least one attribute")
        if name == "image_hosts":
            for entry in value:
                try:
                    parse_host_rule(entry)
                except SourceConfigError as exc:
                    raise bad(f"is invalid: {exc}") from exc
        return tuple(value)
    if not isinstance(value, str) or not value.strip():
        raise bad("must be a non-empty string")
    if name in _SELECTORS:
        try:
            _PROBE.css(value)
        except ValueError as exc:
            raise bad(f"is not a valid CSS selector: {value!r}") from exc
    elif name in _PATTERNS:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise bad(f"is not a valid regular expression: {exc}") from exc
        if compiled.groups != 1:
            raise bad("must have exactly one capture group")
    elif name == "list_url":
        if "{page}" not in value:
            raise bad("must contain the {page} placeholder")
        try:
            value.format(page=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise bad(f"has a bad placeholder: {exc}") from exc
    elif name == "session_cookie" and not _COOKIE_NAME.match(value):
        raise bad("must be a plain cookie name")
    return value
