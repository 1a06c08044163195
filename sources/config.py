"""Settings of the selector-configured `html` adapter, validated from a Source row's `settings` JSON.

Every key is checked up front (type, selector syntax, regex, URL template
placeholders: `sources.config_keys`) so a typo fails with an error
naming the key rather than as an empty crawl hours later. Unknown keys are
errors too. `{"preset": "madara"}` (see `sources.presets`) fills in
a site family's keys; any key given next to it overrides the preset's.

Selectors use the dialect of `sources.selectors` (CSS plus jsoup's
`:contains()`/`:containsOwn()`). Keys marked *spec* are value specs
(`sources.fields`): a CSS field spec (a selector optionally followed
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
Politeness (enforced through the database across every worker on every host; see sources.politeness.rules)
    rate_limit            optional  requests per second to the source, default 2 (0.01 to 1000)
    burst                 optional  requests that may go out back to back after a quiet spell, default 2
    max_concurrency       optional  requests in flight at once, default 2
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from dataclasses import field as dataclass_field
from typing import Any

from catalog import source_settings
from sources import fields as value_specs
from sources.config_keys import (
    CHAPTER_LIST_PLACEHOLDERS,
    PAGE_PLACEHOLDERS,
    PAGE_URL_PLACEHOLDERS,
    template_fields,
    validate_key,
)
from sources.errors import SourceConfigError
from sources.politeness.rules import DEFAULT_BURST, DEFAULT_MAX_CONCURRENCY, DEFAULT_RATE_LIMIT, Politeness

DEFAULT_NUMBER_PATTERN = r"(\d+(?:\.\d+)?)"
DEFAULT_IMAGE_ATTRS = ("data-src", "data-lazy-src", "srcset", "data-cfsrc", "src")
# Request headers whose values are credentials: `headers` entries of these names are secret settings, shown masked
# on every way out and kept when sent back masked (catalog.source_settings.masked). A session cookie never sits in
# the settings at all (`cookie` is refused, sources.config_keys; the operator's session is stored apart,
# crawler.state_store).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "x-auth-token", "x-access-token"})


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
    # Out of the repr: a config in a log line or traceback carries no Authorization value (SECRET_HEADERS).
    headers: tuple[tuple[str, str], ...] = dataclass_field(default=(), repr=False)
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
        from sources.presets import apply_preset

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
        values = {name: validate_key(source_id, name, value) for name, value in data.items()}
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
    checked = {name: validate_key(source_id, name, value) for name, value in values.items() if name in POLITENESS_KEYS}
    return Politeness(**checked)


_REQUIRED = ("list_url", "list_anchor", "title", "chapter_item")


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
