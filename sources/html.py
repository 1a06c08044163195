"""The selector-configured `html` adapter: any manga site, HTML or JSON, described by a Source row's settings.

Pages load through the shared browser when `requires_browser` is set (sites
that need JavaScript or a browser fingerprint), else over plain HTTP; POST
requests (list paging, ajax chapter lists) always go over HTTP with the
cookies the browser picked up. Images always stream over HTTP with the
session cookie and their Referer, so a page's images never pass through Chromium.

The same settings read JSON answers (`sources.fields`,
`json_parsing`): a list, detail, chapter list or page list whose keys are
JSONPaths is requested as JSON and read by path, values captured on one
answer fill the next request's URL, list and chapter-list paging follow
offsets and stated totals, and `{api}` names the site's API origin (the
`api.<host>` sibling unless `api_base` says otherwise), which the host
guard then allows beside the site.

The chapter list's second request (`chapter_lists`) and a site's gate POST
(`gate_post`) are modules of their own.

A selector the crawl cannot do without that matches nothing raises
`SelectorMatchedNothing`, naming the settings key, selector and URL, instead
of yielding an empty list that looks like a caught-up site.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from selectolax.parser import HTMLParser

from fetch.challenge import detect_challenge
from fetch.page_body import is_markup
from sources import fields, gate_post, json_parsing, page_images, parsing
from sources.answers import FetchedPage, HttpImageStream, raise_for_status
from sources.base import MangaDetail, SourceChapter, SourceMangaRef
from sources.chapter_lists import ChapterListRequests
from sources.clearance.handler import past_challenges
from sources.clearance.passers import challenge_handler
from sources.clearance.planning import ClearanceStore, MemoryStore
from sources.config import HtmlSourceConfig
from sources.cookies import SourceCookies
from sources.errors import CrawlerError, NotFound, SelectorMatchedNothing, SessionExpired, SourceConfigError
from sources.hosts import HostGuard
from sources.http import SourceHttp
from sources.paging import more_after, paging_values
from sources.politeness.gate import RequestGate, Unlimited, check_answer, passing
from sources.site_urls import sibling_api_origin, site_url

if TYPE_CHECKING:
    from fetch.tab import RenderedPage
    from sources.browser import BrowserManager

logger = logging.getLogger(__name__)


def api_origin(config: HtmlSourceConfig, base_url: str) -> str:
    """Where {api} points: `api_base` ("{base}" is the site itself), else the `api.<host>` sibling."""
    if config.api_base == "{base}":
        return base_url.rstrip("/")
    return config.api_base or sibling_api_origin(base_url)


def uses_api(config: HtmlSourceConfig) -> bool:
    """Whether any template names {api}: only then is the API host allowed beside the site's own."""
    templates = (
        config.list_url, config.detail_url, config.chapter_list_url, config.chapter_list_fallback_url,
        config.list_link, config.chapter_link_url, config.page_image_url, config.gate_url,
    )  # fmt: skip
    return bool(config.api_base) or any(t and "{api}" in t for t in templates)


class HtmlSource:
    def __init__(
        self,
        source_id: str,
        base_url: str,
        config: HtmlSourceConfig,
        *,
        session_value: str | None = None,
        browser: BrowserManager | None = None,
        gate: RequestGate | None = None,
        clearance_store: ClearanceStore | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        if config.requires_browser and browser is None:
            raise SourceConfigError(f"source {source_id!r} has requires_browser set but no browser was given")
        self.source_id = source_id
        self.base_url = base_url.rstrip("/") + "/"
        self.config = config
        self.api = api_origin(config, base_url)
        api_host = [urlsplit(self.api).netloc] if uses_api(config) and self.api != base_url.rstrip("/") else []
        try:
            self.guard = HostGuard(source_id, base_url, (*config.image_hosts, *api_host))
        except SourceConfigError as exc:
            if not api_host:
                raise
            raise SourceConfigError(
                f"source {source_id!r}: the API origin {self.api} is refused ({exc}); set api_base to the site's API"
            ) from exc
        self._gate_passed = not config.gate_url
        self.notes = parsing.ParseNotes()
        self._browser = browser
        self._session_value = session_value
        self._cookies = SourceCookies()
        # Image URL -> the page it was found on, for the Referer image hosts check.
        self._found_on: dict[str, str] = {}
        if session_value:
            self._cookies.set(config.session_cookie, session_value, urlsplit(base_url).hostname or "")
        # One gate for both ways out (HTTP and browser navigations), so they share the source's limits.
        self._gate = gate or Unlimited(source_id)
        # JavaScript challenges: passed once per source (in the database when the factory built us; per adapter
        # otherwise), the clearance cookie and its User-Agent then sent with every request.
        self._challenges = challenge_handler(
            source_id,
            self._cookies,
            clearance_store or MemoryStore(),
            browser=browser,
            url_allowed=self.guard.allows,
            gate=self._gate,
            session_cookie=config.session_cookie if session_value else "",
            cancel=cancel,
        )
        self._http = SourceHttp(
            source_id,
            self.guard,
            self._cookies,
            headers=dict(config.headers),
            gate=self._gate,
            challenges=self._challenges,
        )
        self._chapter_lists = ChapterListRequests(
            source_id, self.base_url, config, self.guard, self._http, chapters_in=self._chapters_in
        )

    # --- the Source protocol --------------------------------------------------------------

    def list_page(self, n: int) -> tuple[list[SourceMangaRef], bool]:
        if n < 1:
            raise ValueError("list pages are numbered from 1")
        config = self.config
        values = {**self._values(), **paging_values(n, config.list_page_size), "manga_path": config.manga_path}
        url = site_url(self.base_url, fields.fill(config.list_url, values) or "")
        body = {name: fields.fill(template, values) or "" for name, template in config.list_body} or None
        json_list = config.reads_json("list_anchor")
        try:
            page = self._load(
                url,
                what="list page",
                method=config.list_method,
                data=body,
                ready=None if json_list else lambda html: parsing.has_match(html, config.list_anchor),
                json=json_list,
            )
        except NotFound:
            if n == 1:
                raise
            # WordPress answers 404 past the last archive page: the end of the list, not a failure.
            logger.info("source %s: list page %d answered 404; the list ends at page %d", self.source_id, n, n - 1)
            return [], False
        doc = self._document(page, json=json_list, what="list page")
        if json_list:
            refs, dropped = json_parsing.parse_json_list(doc, page.url, config, values)
        else:
            refs, dropped = parsing.parse_manga_list_anchors(
                page.html,
                page.url,
                config.list_anchor,
                key_pattern=config.manga_key_pattern,
                title_spec=parsing.selectors.parse_spec(config.list_title),
            )
        if not refs:
            if n == 1:
                hint = (
                    f"{dropped} anchor(s) had no href or no title (list_title {config.list_title!r})" if dropped else ""
                )
                raise SelectorMatchedNothing(self.source_id, "list_anchor", config.list_anchor, page.url, hint=hint)
            return [], False
        stated = more_after(n, config.list_page_size, json_parsing.total_of(doc, config.list_total), len(refs))
        if stated is not None:
            return refs, stated
        has_next = parsing.has_match(page.html, config.list_next) if config.list_next else not json_list
        return refs, has_next

    def manga_detail(self, ref: SourceMangaRef) -> MangaDetail:
        config = self.config
        values = {**self._values(), "manga_url": ref.url.split("?")[0].rstrip("/"), "key": ref.key}
        detail_json = config.title.startswith("$")
        url = site_url(self.base_url, fields.fill(config.detail_url, values) or "") if config.detail_url else ref.url
        page = self._load(
            url,
            what="manga URL" if url == ref.url else "detail_url",
            ready=None
            if config.reads_json("chapter_item")
            else lambda html: parsing.has_match(html, config.chapter_item),
            json=detail_json,
        )
        doc = self._document(page, json=detail_json, what="detail_url")
        metadata, cover_url = parsing.manga_metadata(doc, page.url, config)
        values |= fields.capture_values(doc, config.detail_captures)
        parsed = self._chapters_in(doc, page.html, page.url, values)
        where = page.url
        if parsed.items == 0 and config.chapter_list_url:
            parsed, where = self._chapter_lists.fetch(page, values)
        if parsed.items == 0:
            hint = f"nor on the chapter_list_url answer {where}" if where != page.url else ""
            raise SelectorMatchedNothing(self.source_id, "chapter_item", config.chapter_item, page.url, hint=hint)
        if not parsed.chapters and parsed.skipped == parsed.items:
            logger.info("source %s: every chapter of %s is locked or paid (chapter_skip)", self.source_id, ref.url)
        elif not parsed.chapters:
            raise SourceConfigError(
                f"source {self.source_id!r}: {parsed.items} chapter item(s) on {where} but none has a link "
                f"(chapter_link {config.chapter_link!r}) and a number (chapter_number_pattern "
                f"{config.chapter_number_pattern!r} in the chapter title)"
            )
        if cover_url:
            self._found_on[cover_url] = page.url
        return MangaDetail(metadata=metadata, cover_url=cover_url, chapters=parsed.chapters)

    def chapter_pages(self, chapter: SourceChapter) -> list[str]:
        if not chapter.url:
            raise CrawlerError(f"source {self.source_id!r}: chapter {chapter.key} has no URL")
        config = self.config
        json_pages = config.reads_json("page_image")
        page = self._load(
            chapter.url,
            what="chapter URL",
            ready=None if json_pages else lambda html: bool(page_images.parse_page_images(html, chapter.url, config)),
            json=json_pages,
        )
        if json_pages:
            doc = self._document(page, json=True, what="chapter URL")
            values = {**self._values(), **fields.capture_values(doc, config.page_captures)}
            urls = json_parsing.json_page_images(doc, page.url, config, values)
        else:
            tree = HTMLParser(page.html)
            values = {**self._values(), **fields.capture_values(tree, config.page_captures)}
            urls = page_images.parse_page_images(page.html, page.url, config, values)
        if not urls:
            if config.page_image:
                key, selector = "page_image", config.page_image
            else:
                key, selector = "page_script", config.page_script or ""
            hint = ""
            if config.page_image and config.page_script:
                hint = f"page_script {config.page_script!r} found no image array in the page's scripts"
            raise SelectorMatchedNothing(self.source_id, key, selector, page.url, hint=hint)
        for url in urls:
            # Refuse the whole chapter up front rather than store half of it.
            self.guard.check(url, what=f"page image of chapter {chapter.key}")
            self._found_on[url] = page.url
        return urls

    def open_image(self, url: str) -> HttpImageStream:
        return self._http.open_image(url, referer=self.referer_for(url))

    def referer_for(self, url: str) -> str | None:
        """The Referer an image request carries (image CDNs of both theme families check it)."""
        mode = self.config.image_referer
        if mode == "none":
            return None
        if mode == "site":
            return self.base_url
        if mode == "chapter":
            return self._found_on.get(url, self.base_url)
        return mode

    def close(self) -> None:
        if self.notes.unparsed_dates:
            logger.warning(
                "source %s: %d chapter date(s) could not be parsed (e.g. %s); check chapter_date, "
                "chapter_date_formats and date_language",
                self.source_id,
                self.notes.unparsed_dates,
                ", ".join(repr(t) for t in self.notes.unparsed_examples),
            )
        self._http.close()
        self._gate.close()

    # --- loading ----------------------------------------------------------------------------

    def _values(self) -> dict[str, object]:
        """What every template may name: the site's base URL and its API origin."""
        return {"base": self.base_url.rstrip("/"), "api": self.api}

    def _chapters_in(self, doc: object, text: str, url: str, values: dict[str, object]) -> parsing.ChapterParse:
        """The chapters an answer (`doc`, parsed from `text`) lists: JSON items or HTML chapter_item elements."""
        config = self.config
        if isinstance(doc, HTMLParser):
            if config.reads_json("chapter_item"):
                return parsing.ChapterParse((), 0)
            return parsing.parse_chapter_items(text, url, config, notes=self.notes)
        return json_parsing.parse_json_chapters(doc, url, config, values, notes=self.notes)

    def _document(self, page: FetchedPage, *, json: bool, what: str) -> object:
        """The answer as the settings read it: a JSON value (the keys are JSONPaths) or an HTML tree."""
        if not json:
            return HTMLParser(page.html)
        try:
            return json_parsing.decode_answer(page.html, page.content_type)
        except json_parsing.NotJson as exc:
            raise SourceConfigError(f"source {self.source_id!r}: {what} {page.url} {exc}") from exc

    def _load(
        self,
        url: str,
        *,
        what: str,
        method: str = "GET",
        data: dict[str, str] | None = None,
        ready: Callable[[str], bool] | None = None,
        json: bool = False,
    ) -> FetchedPage:
        self.guard.check(url, what=what)
        if not self._gate_passed:
            # Once per adapter, even when refused: the error already names gate_url.
            self._gate_passed = True
            gate_post.pass_gate(
                self.source_id, self.base_url, self.config, self._values(), guard=self.guard, http=self._http
            )
        if self.config.requires_browser and method == "GET" and not json:
            page = self._render(url, ready)
        else:
            page = self._http.request_page(url, method=method, data=data)
            if not json and not is_markup(page.content_type):  # a JSON or text answer is no page
                raise SourceConfigError(
                    f"source {self.source_id!r}: {what} {page.url} answered {page.content_type}, not HTML"
                )
        if self.config.login_wall_selector and parsing.has_match(page.html, self.config.login_wall_selector):
            raise SessionExpired(f"source {self.source_id!r}: {url} answered the login wall (session expired)")
        return page

    def _render(self, url: str, ready: Callable[[str], bool] | None) -> FetchedPage:
        rendered = past_challenges(
            url,
            lambda: self._render_once(url, ready),
            lambda page: detect_challenge(page.status or 200, {}, page.html),
            self._challenges,
        )
        for cookie in rendered.cookies:
            self._cookies.set(cookie["name"], cookie["value"], cookie["domain"])
        raise_for_status(self.source_id, rendered.status or 200, rendered.url)
        return FetchedPage(rendered.url, rendered.status or 200, rendered.html)

    def _render_once(self, url: str, ready: Callable[[str], bool] | None) -> RenderedPage:
        assert self._browser is not None
        cookies = []
        if self._session_value:
            cookies.append({"name": self.config.session_cookie, "value": self._session_value, "url": self.base_url})
        if self._challenges.clearance is not None:
            cookies += self._challenges.clearance.browser_cookies()
        # A navigation is one request of the source (its redirect hops ride on
        # the same token); the slot is held until the page has settled.
        with passing(self._gate):
            rendered = self._browser.render(
                url,
                cookies=cookies,
                url_allowed=self.guard.allows,
                ready=ready,
                wait_secs=self.config.browser_wait_secs,
                network_idle=self.config.browser_network_idle,
            )
            if rendered.status is not None:
                check_answer(self._gate, rendered.status, rendered.retry_after, rendered.url)
        return rendered
