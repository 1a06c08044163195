"""Each key of an html source's settings checked on its own: its type, selector or spec syntax, regex, template.

Apart from `sources.config` (the settings record, its defaults and
the rules between keys) because this is the long table of per-key checks,
read when adding a key; the record stays short enough to read whole. Every
error names the source and the key, so a typo fails when the source is
saved rather than as an empty crawl hours later.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

from sources import fields as value_specs
from sources import selectors
from sources.dates import known_language, readable_format, utc_offset
from sources.errors import SourceConfigError
from sources.hosts import parse_host_rule

_COOKIE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,64}$")
_FORBIDDEN_HEADERS = {"cookie", "host", "content-length"}
PAGE_PLACEHOLDERS = frozenset({"page", "page_index", "offset", "start_index"})
LIST_PLACEHOLDERS = PAGE_PLACEHOLDERS | {"manga_path", "api", "base"}
MAX_MANGA_PATH = 200
_MANGA_PATH = re.compile(r"^[A-Za-z0-9._~%-]+(?:/[A-Za-z0-9._~%-]+)*$")
CHAPTER_LIST_PLACEHOLDERS = frozenset({"manga_url", "base", "id", "api", "key"}) | PAGE_PLACEHOLDERS
DETAIL_PLACEHOLDERS = frozenset({"manga_url", "key", "base", "api"})
ITEM_PLACEHOLDERS = frozenset({"base", "api", "manga_url", "key"})
PAGE_URL_PLACEHOLDERS = frozenset({"value", "base", "api"})
GATE_PLACEHOLDERS = frozenset({"base", "api"})
_CAPTURE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


_SELECTORS = {"list_next", "chapter_link", "login_wall_selector"}
# Items: a CSS selector, or a JSONPath that reads the answer as JSON. The cover is an <img> or a JSON URL.
_ITEMS = {"list_anchor", "chapter_item", "page_image", "cover"}
_SPECS = {"list_title", "title", "alt_titles", "description", "authors", "status", "tags", "chapter_title"}
_SPECS |= {"chapter_list_id", "list_total", "chapter_number", "chapter_list_total", "list_sort"}
_CAPTURES = {"detail_captures", "page_captures"}
_SIZES = {"list_page_size", "chapter_list_page_size"}
_PATTERNS = {"manga_key_pattern", "chapter_key_pattern", "chapter_number_pattern", "page_script"}
_METHODS = {"list_method", "chapter_list_method", "chapter_list_fallback_method"}
_BODIES = {"list_body": LIST_PLACEHOLDERS, "chapter_list_body": CHAPTER_LIST_PLACEHOLDERS}
_BODIES["chapter_list_fallback_body"] = CHAPTER_LIST_PLACEHOLDERS
_BODIES["gate_body"] = GATE_PLACEHOLDERS
_TEMPLATES = {"list_url": LIST_PLACEHOLDERS, "chapter_list_url": CHAPTER_LIST_PLACEHOLDERS}
_TEMPLATES["chapter_list_fallback_url"] = CHAPTER_LIST_PLACEHOLDERS
_TEMPLATES |= {"detail_url": DETAIL_PLACEHOLDERS, "gate_url": GATE_PLACEHOLDERS}
# Templates whose placeholders are also JSONPaths on the item, and capture names checked once all keys are read.
_ITEM_TEMPLATES = {"list_link": ITEM_PLACEHOLDERS, "chapter_link_url": ITEM_PLACEHOLDERS}
_ITEM_TEMPLATES["chapter_key"] = ITEM_PLACEHOLDERS
_BOOLEANS = {"requires_browser", "browser_network_idle"}
_COUNTS = {"burst": (1, 1000), "max_concurrency": (1, 64)}
_STRING_LISTS = {"image_attrs", "image_hosts", "chapter_date_formats"}
_OPTIONAL_NONE = {
    "page_image", "preset", "list_next", "manga_key_pattern", "alt_titles", "alt_titles_separator", "description",
    "authors", "status", "tags", "cover", "chapter_title", "chapter_key_pattern", "chapter_url_suffix",
    "chapter_list_url", "chapter_list_id", "chapter_list_fallback_url", "page_script", "page_script_path",
    "login_wall_selector", "list_link", "list_sort", "list_page_size", "list_total", "api_base", "gate_url", "detail_url",
    "chapter_link_url", "chapter_key", "chapter_number", "chapter_list_page_size", "chapter_list_total",
    "date_utc_offset", "page_image_url",
}  # fmt: skip
_EMPTY_WHEN_NONE = {"chapter_date": (), "list_body": (), "chapter_list_body": (), "chapter_list_fallback_body": ()}
_EMPTY_WHEN_NONE |= {"headers": (), "gate_body": (), "detail_captures": (), "page_captures": (), "chapter_skip": ()}


def validate_key(source_id: str, name: str, value: Any) -> Any:
    def bad(why: str) -> SourceConfigError:
        return SourceConfigError(f"source {source_id!r}: settings key {name!r} {why}")

    if value is None and name in _OPTIONAL_NONE:
        return None
    if value is None and name in _EMPTY_WHEN_NONE:
        return _EMPTY_WHEN_NONE[name]
    if name in _BOOLEANS:
        if not isinstance(value, bool):
            raise bad("must be true or false")
        return value
    if name == "browser_wait_secs":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 120:
            raise bad("must be a number of seconds between 0 and 120")
        return float(value)
    if name == "rate_limit":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.01 <= value <= 1000:
            raise bad("must be a number of requests per second between 0.01 and 1000")
        return float(value)
    if name in _SIZES:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
            raise bad("must be a whole number between 1 and 1000")
        return value
    if name in _CAPTURES:
        if not isinstance(value, dict) or not value:
            raise bad("must be a JSON object {name: value spec}")
        for capture, spec in value.items():
            if not isinstance(capture, str) or not _CAPTURE_NAME.match(capture):
                raise bad(f"has a bad name {capture!r} (lower-case letters, digits, _)")
            if not isinstance(spec, str) or not spec.strip():
                raise bad(f"has no value spec for {capture!r}")
            _check_spec(spec, bad, where=f"[{capture!r}]")
        return tuple(value.items())
    if name == "chapter_skip":
        specs = [value] if isinstance(value, str) else value
        if not isinstance(specs, list) or not specs or not all(isinstance(v, str) and v.strip() for v in specs):
            raise bad("must be a value spec or a non-empty list of value specs")
        for index, spec in enumerate(specs):
            _check_spec(spec, bad, where=f"[{index}]" if isinstance(value, list) else "")
        return tuple(specs)
    if name in _COUNTS:
        low, high = _COUNTS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise bad(f"must be a whole number between {low} and {high}")
        return value
    if name in _STRING_LISTS:
        return _string_list(name, value, bad)
    if name == "chapter_date":
        specs = [value] if isinstance(value, str) else value
        if not isinstance(specs, list) or not specs or not all(isinstance(v, str) and v.strip() for v in specs):
            raise bad("must be a field spec or a non-empty list of field specs")
        for spec in specs:
            _check_spec(spec, bad)
        return tuple(specs)
    if name in _BODIES or name == "headers":
        return _string_map(name, value, bad)
    if not isinstance(value, str) or not value.strip():
        raise bad("must be a non-empty string")
    if name == "cover" and (value.startswith("re:") or value_specs.STEP_SEPARATOR in value):
        _check_spec(value, bad)  # a cover URL read out of an attribute: "div.cover @style | re:url\((.+)\)"
    elif name in _SELECTORS or (name in _ITEMS and not value.startswith("$")):
        try:
            selectors.check_selector(value)
        except ValueError as exc:
            raise bad(f"is not a valid CSS selector: {value!r}") from exc
    elif name in _ITEMS:
        try:
            value_specs.compile_jsonpath(value)
        except ValueError as exc:
            raise bad(f"is not a valid JSONPath: {value!r} ({exc})") from exc
    elif name in _ITEM_TEMPLATES:
        try:
            value_specs.check_template(value, _ITEM_TEMPLATES[name], item_paths=True)
        except ValueError as exc:
            raise bad(str(exc)) from exc
    elif name == "page_image_url":
        # Its capture names are checked with page_captures, once every key is read.
        pass
    elif name == "api_base":
        if not value.startswith(("http://", "https://")) and value != "{base}":
            raise bad('must be an absolute http(s) URL like "https://api.example.com", or "{base}"')
        return value.rstrip("/")
    elif name == "date_utc_offset":
        if utc_offset(value) is None:
            raise bad(f'must be an offset from UTC like "+07:00" or "-03:30" (got {value!r})')
    elif name in _SPECS:
        _check_spec(value, bad)
    elif name in _PATTERNS or name == "alt_titles_separator":
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise bad(f"is not a valid regular expression: {exc}") from exc
        if name in _PATTERNS and compiled.groups != 1:
            raise bad("must have exactly one capture group")
    elif name in _TEMPLATES:
        _check_template(value, _TEMPLATES[name], bad)
    elif name in _METHODS:
        if value.upper() not in ("GET", "POST"):
            raise bad("must be GET or POST")
        return value.upper()
    elif name == "session_cookie" and not _COOKIE_NAME.match(value):
        raise bad("must be a plain cookie name")
    elif name == "date_language" and not known_language(value):
        raise bad(f"names no language the date parser knows: {value!r} (use a code like 'en', 'es', 'pt')")
    elif name == "image_referer" and value not in ("chapter", "site", "none") and not value.startswith("http"):
        raise bad('must be "chapter", "site", "none" or an absolute URL')
    elif name == "page_script_path" and value.startswith("$"):
        try:
            value_specs.compile_jsonpath(value)
        except ValueError as exc:
            raise bad(f"is not a valid JSONPath: {value!r} ({exc})") from exc
    elif name == "page_script_path" and not all(value.split(".")):
        raise bad("must be a dotted path like sources.0.images, or a JSONPath like $[*].url")
    elif name == "manga_path":
        path = value.strip().strip("/")
        segments = path.split("/")
        if len(path) > MAX_MANGA_PATH or not _MANGA_PATH.match(path) or {".", ".."} & set(segments):
            raise bad(f"must be the site's manga directory, like 'manga' or 'series' (got {value[:60]!r})")
        return path
    return value


def _string_list(name: str, value: Any, bad: Callable[[str], SourceConfigError]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise bad("must be a list of non-empty strings")
    if name == "image_attrs" and not value:
        raise bad("must name at least one attribute")
    if name == "chapter_date_formats":
        for fmt in value:
            if not readable_format(fmt):
                raise bad(f"has {fmt!r}, which is not a strptime format that reads back what it writes")
    if name == "image_hosts":
        for entry in value:
            try:
                parse_host_rule(entry)
            except SourceConfigError as exc:
                raise bad(f"is invalid: {exc}") from exc
    return tuple(value)


def _string_map(name: str, value: Any, bad: Callable[[str], SourceConfigError]) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad("must be a JSON object of strings")
    if name == "headers":
        for header in value:
            if not _HEADER_NAME.match(header) or header.lower() in _FORBIDDEN_HEADERS:
                raise bad(f"cannot set header {header!r}")
    else:
        for template in value.values():
            _check_template(template, _BODIES[name], bad)
    return tuple(value.items())


def _check_spec(value: str, bad: Callable[[str], SourceConfigError], *, where: str = "") -> None:
    try:
        value_specs.parse_value_spec(value)
    except ValueError as exc:
        plain_css = not value.startswith(("$", "re:")) and value_specs.STEP_SEPARATOR not in value
        what = "CSS selector" if plain_css else "value spec"
        raise bad(f"{where}{' ' if where else ''}is not a valid {what}: {value!r} ({exc})") from exc


def _check_template(value: str, allowed: frozenset[str], bad: Callable[[str], SourceConfigError]) -> None:
    try:
        names = {field for _, field, _, _ in string.Formatter().parse(value) if field is not None}
    except ValueError as exc:
        raise bad(f"has a bad placeholder: {exc}") from exc
    if allowed is CHAPTER_LIST_PLACEHOLDERS:
        # Values detail_captures name are allowed too: checked once every key is read (_check_combination).
        allowed = allowed | {name for name in names if _CAPTURE_NAME.match(name)}
    unknown = sorted(names - allowed)
    if unknown:
        raise bad(f"has an unknown placeholder {{{unknown[0]}}} (allowed: {', '.join(sorted(allowed))})")


def template_fields(value: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(value) if field}
