"""Settings of the selector-configured `html` adapter, validated from a Source row's `settings` JSON.

Every key is checked up front (type, selector syntax, regex, URL template
placeholders) so a typo fails with an error naming the key rather than as an
empty crawl hours later. Unknown keys are errors too. `{"preset": "madara"}`
(see `crawler.sources.presets`) fills in a site family's keys; any key given
next to it overrides the preset's.

Selectors use the dialect of `crawler.sources.selectors` (CSS plus jsoup's
`:contains()`/`:containsOwn()`). Keys marked *spec* are value specs
(`crawler.sources.fields`): a CSS field spec (a selector optionally followed
by ` ::own` or ` @attr`), a JSONPath starting with `$` (read on a JSON
answer), or `re:<regex>` on the answer's text, each optionally followed by
steps after ` | ` (`re:`, `base64`, `html:`, `json:`). Item-relative keys
(`chapter_*`) are relative to each `chapter_item`. Where a selector key names
items (`list_anchor`, `chapter_item`, `page_image`), a JSONPath instead reads
the answer as JSON: `$.posts[*]`.

Templates take `{name}` placeholders; `{api}` is `api_base` (default: the
`api.<host>` sibling of base_url), `{base}` the base URL; item templates
(`list_link`, `chapter_link_url`, `chapter_key`) also take JSONPaths on the
item, `{$.slug}`.

List pages
    list_url              required  URL template ({page}, {page_index} = page - 1, {offset} and {start_index} with
                                    list_page_size, {manga_path}, {api}); absolute, or a
                                    path under base_url ("/manga/..." keeps base_url's own path: a site
                                    installed under /x/ lists at /x/manga/...)
    manga_path            optional  the site's manga directory, default "manga" ("series", "comic", "webtoon",
                                    ...): the presets' list_url reads it; add_source detects it
    list_method           optional  GET (default) or POST
    list_body             optional  POST form fields {name: template with {page}/{page_index}}
    list_anchor           required  list anchors (selector); their href becomes the manga URL
    list_title            optional  spec read on each anchor for the title, default "@title"
    list_next             optional  "next page" selector; absent = a non-empty page means there may be more
    manga_key_pattern     optional  regex with one group, searched in the manga URL's path (default: last segment)
    list_link             optional  JSON lists: template of each item's manga URL ("/series/{$.slug}"); required
                                    when list_anchor is a JSONPath (list_title then reads the item: "$.title")
    list_sort             optional  JSON lists: spec read on each item to order the list newest first (descending:
                                    "$.last_chapter.published_on") when the site's own order is not by update
    list_page_size        optional  items a list page holds: {offset} = (page - 1) * size, {start_index} = offset + 1
    list_total            optional  spec of the whole list's size on a list answer ("$.totalCount"): no next page
                                    once page * list_page_size reaches it
    api_base              optional  origin of the site's JSON API for {api}, default the api.<host> sibling
    gate_url, gate_body   optional  one POST (form fields) before the first request of a crawl: an adult gate
Manga detail
    detail_url            optional  where the manga's details are read, default its URL: template with
                                    {manga_url}, {key}, {base}, {api} ("{api}/api/post?postSlug={key}")
    detail_captures       optional  {name: spec} read on the detail answer; {name} in chapter_list_url/body
    title                 required  spec
    alt_titles, description, authors, status, tags   optional specs (status: the first value that names a
                                    status in date_language or English: "En curso", "Berjalan", "Completed")
    alt_titles_separator  optional  regex splitting each alt_titles value ("," or ";" lists)
    cover                 optional  selector of the cover <img> (read with image_attrs), or a value spec of its URL
                                    ("$.comic.thumbnail", "div.photo @style | re:url\\('([^']+)")
Chapter list
    chapter_item          required  selector of one chapter entry
    chapter_link          optional  selector of its link, default "a"
    chapter_link_url      optional  JSON chapters: template of the chapter's URL (where its pages are read),
                                    e.g. "{api}/api/chapter?chapterId={$.id}"
    chapter_key           optional  JSON chapters: template of the chapter's key ("{$.post.slug}/{$.slug}"),
                                    default read off its URL like HTML chapters
    chapter_number        optional  spec of the chapter number when the site gives it apart ("$.number")
    chapter_skip          optional  spec or list of specs: an item where any yields a value is skipped and
                                    counted (locked or paid chapters: "$.isLocked", "img[alt~=Coin] @alt")
    chapter_title         optional  spec for the chapter title, default the link's text
    chapter_date          optional  spec, or a list of specs tried in order (ISO, formats, relative phrases)
    chapter_date_formats  optional  list of strptime formats, e.g. ["%B %d, %Y"] or ["%d/%m/%Y"] (numeric dates
                                    are ambiguous: add_source detects the order from samples when it can)
    date_language         optional  the site's language (its <html lang>, which add_source reads), default "en":
                                    month names, relative dates ("hace 2 días") and status words
    chapter_key_pattern   optional  regex with one group, searched in the chapter URL's path (default: the whole path)
    chapter_number_pattern optional regex with one group, searched in the chapter title
    chapter_url_suffix    optional  appended to each chapter URL unless present (Madara's "?style=list")
    chapter_list_url      optional  a second request for the list when the page has no chapter_item:
                                    template with {manga_url} (no trailing slash), {base} (base_url, no
                                    trailing slash), {id} (the chapter_list_id value)
    chapter_list_method   optional  GET or POST (default POST)
    chapter_list_body     optional  POST form fields {name: template}
    chapter_list_id       optional  spec read on the detail page for {id}, e.g. "div[data-id] @data-id"
    chapter_list_fallback_url, chapter_list_fallback_method, chapter_list_fallback_body
                          optional  tried when chapter_list_url answers 4xx (an old endpoint switched off)
    chapter_list_page_size optional the chapter list takes several requests: chapter_list_url takes {page},
                                    {offset}, {start_index}; requests go on until a short or empty answer
    chapter_list_total    optional  spec of the chapter count on a chapter list answer (stops the requests)
    date_utc_offset       optional  the zone of dates printed without one, "+07:00" (default UTC)
Chapter pages
    page_image            required  the reader's <img> elements (optional when page_script is set)
    page_script           optional  regex over inline <script> text; group 1 marks where a JS/JSON value
                                    starts; the value (array or object) is parsed whole with chompjs
    page_script_path      optional  dotted path into that value, e.g. "sources.0.images", or a JSONPath
                                    ("$[*].url": FoOlSlide's `var pages = [{"url": ...}]`)
    page_captures         optional  {name: spec} read on the chapter answer for page_image_url
    page_image_url        optional  template of each image URL from {value} (what image_attrs read, or the
                                    JSON value) and page_captures: "{cdn}/uploads/{value}"
    image_attrs           optional  attributes holding image URLs, first present wins ("srcset" = largest)
Requests
    image_referer         optional  Referer of image requests: "chapter" (default; covers use the manga
                                    URL), "site" (base_url), "none", or an absolute URL
    headers               optional  extra request headers {name: value} for every request
    requires_browser      optional  load pages through the shared Chromium
    browser_wait_secs     optional  how long the browser waits for the required selector, default 10
    browser_network_idle  optional  also wait for network idle (bounded by browser_wait_secs)
    image_hosts           optional  extra hosts images may come from (cdn.example.com[:port], *.example.com)
    session_cookie        optional  cookie name of the operator's session, default PHPSESSID
    login_wall_selector   optional  matches only on the site's login form (= session expired)
Politeness (enforced through the database across every worker on every host; see crawler.politeness.rules)
    rate_limit            optional  requests per second to the source, default 2 (0.01 to 1000)
    burst                 optional  requests that may go out back to back after a quiet spell, default 2
    max_concurrency       optional  requests in flight at once, default 2
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from catalog import source_settings
from crawler.errors import SourceConfigError
from crawler.politeness.rules import DEFAULT_BURST, DEFAULT_MAX_CONCURRENCY, DEFAULT_RATE_LIMIT, Politeness
from crawler.sources import fields as value_specs
from crawler.sources import selectors
from crawler.sources.dates import known_language, readable_format, utc_offset
from crawler.sources.hosts import parse_host_rule

DEFAULT_NUMBER_PATTERN = r"(\d+(?:\.\d+)?)"
DEFAULT_IMAGE_ATTRS = ("data-src", "data-lazy-src", "srcset", "data-cfsrc", "src")
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


@dataclass(frozen=True)
class HtmlSourceConfig:
    list_url: str
    list_anchor: str
    title: str
    chapter_item: str
    page_image: str | None = None
    preset: str | None = None
    list_method: str = "GET"
    list_body: tuple[tuple[str, str], ...] = ()
    list_title: str = "@title"
    list_next: str | None = None
    manga_path: str = "manga"
    manga_key_pattern: str | None = None
    list_link: str | None = None
    list_sort: str | None = None
    list_page_size: int | None = None
    list_total: str | None = None
    api_base: str | None = None
    gate_url: str | None = None
    gate_body: tuple[tuple[str, str], ...] = ()
    detail_url: str | None = None
    detail_captures: tuple[tuple[str, str], ...] = ()
    alt_titles: str | None = None
    alt_titles_separator: str | None = None
    description: str | None = None
    authors: str | None = None
    status: str | None = None
    tags: str | None = None
    cover: str | None = None
    chapter_link: str = "a"
    chapter_link_url: str | None = None
    chapter_key: str | None = None
    chapter_number: str | None = None
    chapter_skip: tuple[str, ...] = ()
    chapter_list_page_size: int | None = None
    chapter_list_total: str | None = None
    date_utc_offset: str | None = None
    chapter_title: str | None = None
    chapter_date: tuple[str, ...] = ()
    chapter_date_formats: tuple[str, ...] = ()
    date_language: str = "en"
    chapter_key_pattern: str | None = None
    chapter_number_pattern: str = DEFAULT_NUMBER_PATTERN
    chapter_url_suffix: str | None = None
    chapter_list_url: str | None = None
    chapter_list_method: str = "POST"
    chapter_list_body: tuple[tuple[str, str], ...] = ()
    chapter_list_id: str | None = None
    chapter_list_fallback_url: str | None = None
    chapter_list_fallback_method: str = "POST"
    chapter_list_fallback_body: tuple[tuple[str, str], ...] = ()
    page_script: str | None = None
    page_script_path: str | None = None
    page_captures: tuple[tuple[str, str], ...] = ()
    page_image_url: str | None = None
    image_attrs: tuple[str, ...] = DEFAULT_IMAGE_ATTRS
    image_referer: str = "chapter"
    headers: tuple[tuple[str, str], ...] = ()
    requires_browser: bool = False
    browser_wait_secs: float = 10.0
    browser_network_idle: bool = False
    image_hosts: tuple[str, ...] = ()
    session_cookie: str = "PHPSESSID"
    login_wall_selector: str | None = None
    rate_limit: float = DEFAULT_RATE_LIMIT
    burst: int = DEFAULT_BURST
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY

    @property
    def politeness(self) -> Politeness:
        return Politeness(rate_limit=self.rate_limit, burst=self.burst, max_concurrency=self.max_concurrency)

    @classmethod
    def from_settings(cls, data: Any, *, source_id: str) -> HtmlSourceConfig:
        """Validate a settings dict (preset applied first); raise SourceConfigError naming the first bad key."""
        # Imported here: presets are plain settings dicts validated by this very function.
        from crawler.sources.presets import apply_preset

        if not isinstance(data, dict):
            raise SourceConfigError(f"source {source_id!r}: settings must be a JSON object")
        data = apply_preset(data, source_id=source_id)
        # Keys other apps own (the readers' reading_direction, language) are theirs to check.
        unknown = sorted(set(data) - SETTINGS_KEYS - source_settings.known_keys())
        if unknown:
            raise SourceConfigError(f"source {source_id!r}: unknown settings key {unknown[0]!r}")
        data = {name: value for name, value in data.items() if name in SETTINGS_KEYS}
        missing = [name for name in _REQUIRED if name not in data]
        if missing:
            raise SourceConfigError(f"source {source_id!r}: settings key {missing[0]!r} is required")
        values = {name: _validate(source_id, name, value) for name, value in data.items()}
        config = cls(**values)
        _check_combination(source_id, config)
        return config

    def spec(self, name: str) -> value_specs.ValueSpec | None:
        """The parsed value spec of key `name` (None when unset)."""
        value = getattr(self, name)
        return value_specs.parse_value_spec(value) if value else None

    def reads_json(self, name: str) -> bool:
        """Whether the items key `name` (list_anchor, chapter_item, page_image) is a JSONPath."""
        value = getattr(self, name)
        return bool(value) and value.startswith("$")


SETTINGS_KEYS = frozenset(f.name for f in fields(HtmlSourceConfig))


POLITENESS_KEYS = frozenset({"rate_limit", "burst", "max_concurrency"})


def politeness_from_settings(values: dict[str, Any], *, source_id: str) -> Politeness:
    """The politeness keys of a row whose adapter is not selector-configured (others in `values` are ignored)."""
    checked = {name: _validate(source_id, name, value) for name, value in values.items() if name in POLITENESS_KEYS}
    return Politeness(**checked)


_REQUIRED = ("list_url", "list_anchor", "title", "chapter_item")
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


def _validate(source_id: str, name: str, value: Any) -> Any:
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


def _check_combination(source_id: str, config: HtmlSourceConfig) -> None:
    """Rules between keys, checked once every key is valid on its own."""

    def bad(key: str, why: str) -> SourceConfigError:
        return SourceConfigError(f"source {source_id!r}: settings key {key!r} {why}")

    paged = template_fields(config.list_url) | {f for _, v in config.list_body for f in template_fields(v)}
    if not paged & PAGE_PLACEHOLDERS and not config.reads_json("list_anchor"):
        raise bad("list_url", "must contain the {page} placeholder (or list_body must, with list_method POST)")
    if paged & {"offset", "start_index"} and config.list_page_size is None:
        raise bad("list_url", "uses {offset} or {start_index} but list_page_size is not set")
    if config.list_total and config.list_page_size is None:
        raise bad("list_total", "needs list_page_size")
    if config.reads_json("list_anchor") and not config.list_link:
        raise bad("list_link", 'is required when list_anchor is a JSONPath (the manga URL: "/series/{$.slug}")')
    if config.reads_json("list_anchor") and value_specs.parse_value_spec(config.list_title).reader == "css":
        raise bad("list_title", 'must read each JSON item when list_anchor is a JSONPath (e.g. "$.title")')
    if config.reads_json("chapter_item") and not config.chapter_link_url:
        raise bad("chapter_link_url", "is required when chapter_item is a JSONPath (each chapter's URL)")
    if config.gate_body and not config.gate_url:
        raise bad("gate_body", "needs gate_url")
    captured = {name for name, _ in config.detail_captures}
    for prefix in ("chapter_list", "chapter_list_fallback"):
        url = getattr(config, f"{prefix}_url")
        body = getattr(config, f"{prefix}_body")
        used = (value_specs.placeholders(url) if url else []) + [
            f for _, v in body for f in value_specs.placeholders(v)
        ]
        unknown = sorted(set(used) - CHAPTER_LIST_PLACEHOLDERS - captured)
        if unknown:
            allowed = ", ".join(sorted(CHAPTER_LIST_PLACEHOLDERS | captured))
            raise bad(
                f"{prefix}_url",
                f"has an unknown placeholder {{{unknown[0]}}} (allowed: {allowed}, or a name detail_captures gives)",
            )
        if set(used) & {"offset", "start_index"} and config.chapter_list_page_size is None:
            raise bad(f"{prefix}_url", "uses {offset} or {start_index} but chapter_list_page_size is not set")
    if config.chapter_list_total and config.chapter_list_page_size is None:
        raise bad("chapter_list_total", "needs chapter_list_page_size")
    if config.page_image_url:
        allowed = PAGE_URL_PLACEHOLDERS | {name for name, _ in config.page_captures}
        unknown = sorted(set(value_specs.placeholders(config.page_image_url)) - allowed)
        if unknown:
            raise bad(
                "page_image_url", f"has an unknown placeholder {{{unknown[0]}}} (allowed: {', '.join(sorted(allowed))})"
            )
    if config.list_body and config.list_method != "POST":
        raise bad("list_body", "needs list_method POST")
    if config.page_image is None and config.page_script is None:
        raise bad("page_image", "is required (unless page_script is set)")
    if config.page_script_path and not config.page_script:
        raise bad("page_script_path", "needs page_script")
    for prefix in ("chapter_list", "chapter_list_fallback"):
        url = getattr(config, f"{prefix}_url")
        body = getattr(config, f"{prefix}_body")
        used = (template_fields(url) if url else set()) | {f for _, v in body for f in template_fields(v)}
        if body and not url:
            raise bad(f"{prefix}_body", f"needs {prefix}_url")
        if "id" in used and not config.chapter_list_id:
            raise bad(f"{prefix}_url", "uses {id} but chapter_list_id is not set")
    if config.chapter_list_fallback_url and not config.chapter_list_url:
        raise bad("chapter_list_fallback_url", "needs chapter_list_url")
