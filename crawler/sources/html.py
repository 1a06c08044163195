"""The selector-configured `html` adapter: any server-rendered manga site, described by a Source row's settings.

Pages load through the shared browser when `requires_browser` is set (sites
that need JavaScript or a browser fingerprint), else over plain HTTP. Images
always stream over HTTP, carrying the session cookie and whatever cookies the
browser context picked up, so a page's images never pass through Chromium.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from crawler.errors import CrawlerError, SessionExpired, SourceConfigError
from crawler.sources import parsing
from crawler.sources.base import MangaDetail, SourceChapter, SourceMangaRef
from crawler.sources.config import HtmlSourceConfig
from crawler.sources.hosts import HostGuard
from crawler.sources.http import FetchedPage, HttpImageStream, SourceCookies, SourceHttp, raise_for_status

if TYPE_CHECKING:
    from crawler.sources.browser import BrowserManager

logger = logging.getLogger(__name__)


class HtmlSource:
    def __init__(
        self,
        source_id: str,
        base_url: str,
        config: HtmlSourceConfig,
        *,
        session_value: str | None = None,
        browser: BrowserManager | None = None,
    ) -> None:
        if config.requires_browser and browser is None:
            raise SourceConfigError(f"source {source_id!r} has requires_browser set but no browser was given")
        self.source_id = source_id
        self.base_url = base_url.rstrip("/") + "/"
        self.config = config
        self.guard = HostGuard(source_id, base_url, config.image_hosts)
        self._browser = browser
        self._session_value = session_value
        self._cookies = SourceCookies()
        if session_value:
            self._cookies.set(config.session_cookie, session_value, urlsplit(base_url).hostname or "")
        self._http = SourceHttp(source_id, self.guard, self._cookies)

    # --- the Source protocol --------------------------------------------------------------

    def list_page(self, n: int) -> tuple[list[SourceMangaRef], bool]:
        if n < 1:
            raise ValueError("list pages are numbered from 1")
        page = self._load(urljoin(self.base_url, self.config.list_url.format(page=n)), what="list page")
        refs, _dropped = parsing.parse_manga_list_anchors(
            page.html, page.url, self.config.list_anchor, key_pattern=self.config.manga_key_pattern
        )
        if self.config.list_next:
            has_next = parsing.has_match(page.html, self.config.list_next)
        else:
            has_next = bool(refs)
        return refs, has_next

    def manga_detail(self, ref: SourceMangaRef) -> MangaDetail:
        page = self._load(ref.url, what="manga URL")
        return parsing.parse_manga_detail(page.html, page.url, self.config)

    def chapter_pages(self, chapter: SourceChapter) -> list[str]:
        if not chapter.url:
            raise CrawlerError(f"source {self.source_id!r}: chapter {chapter.key} has no URL")
        page = self._load(chapter.url, what="chapter URL")
        urls = parsing.parse_page_images(page.html, page.url, self.config)
        for url in urls:
            # Refuse the whole chapter up front rather than store half of it.
            self.guard.check(url, what=f"page image of chapter {chapter.key}")
        return urls

    def open_image(self, url: str) -> HttpImageStream:
        return self._http.open_image(url)

    def close(self) -> None:
        self._http.close()

    # --- loading ----------------------------------------------------------------------------

    def _load(self, url: str, *, what: str) -> FetchedPage:
        self.guard.check(url, what=what)
        page = self._render(url) if self.config.requires_browser else self._http.get_page(url)
        if self.config.login_wall_selector and parsing.has_match(page.html, self.config.login_wall_selector):
            raise SessionExpired(f"source {self.source_id!r}: {url} answered the login wall (session expired)")
        return page

    def _render(self, url: str) -> FetchedPage:
        assert self._browser is not None
        cookies = []
        if self._session_value:
            cookies.append({"name": self.config.session_cookie, "value": self._session_value, "url": self.base_url})
        rendered = self._browser.render(url, cookies=cookies, url_allowed=self.guard.allows)
        for cookie in rendered.cookies:
            self._cookies.set(cookie["name"], cookie["value"], cookie["domain"])
        raise_for_status(self.source_id, rendered.status or 200, rendered.url)
        return FetchedPage(rendered.url, rendered.status or 200, rendered.html)
