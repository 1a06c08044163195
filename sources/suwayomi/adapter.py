"""The `suwayomi` adapter: one source of a Suwayomi-Server, through the Source protocol.

The newest-first walk is the source's LATEST listing page by page (POPULAR
where the extension has no latest listing, or when `suwayomi_listing` says
so), `hasNextPage` ending it; details come from `fetchManga`, the chapter list
from `fetchChapters`, page URLs from `fetchChapterPages` (the server's page
endpoint, which fetches the image from the site and caches it), covers from
its thumbnail endpoint. Every request is one of this source's requests:
politeness, deadlines and the outbound guard apply to the server as to a site.
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

from sources.answers import HttpImageStream
from sources.base import MangaDetail, SourceChapter, SourceMangaRef
from sources.cookies import SourceCookies
from sources.errors import NotFound, SourceConfigError
from sources.hosts import HostGuard
from sources.http import SourceHttp
from sources.politeness.gate import RequestGate, Unlimited
from sources.suwayomi import records
from sources.suwayomi.answers import ServerSource
from sources.suwayomi.client import SuwayomiClient, basic_auth_header
from sources.suwayomi.config import SuwayomiConfig
from sources.suwayomi.failures import missing_source_error, pick_source

logger = logging.getLogger(__name__)


def listing_for(source: ServerSource, config: SuwayomiConfig, source_id: str) -> str:
    """The FetchSourceMangaType the walk uses: LATEST when the source has it (or is told to), else POPULAR."""
    if config.listing == "popular":
        return "POPULAR"
    if config.listing == "latest" and not source.supports_latest:
        raise SourceConfigError(
            f"source {source_id!r}: settings key 'suwayomi_listing' is 'latest' but Suwayomi source "
            f"{source.display_name!r} has no latest listing: use 'auto' or 'popular'"
        )
    return "LATEST" if source.supports_latest else "POPULAR"


class SuwayomiSource:
    def __init__(
        self, source_id: str, base_url: str, config: SuwayomiConfig, *, gate: RequestGate | None = None
    ) -> None:
        self.source_id = source_id
        self.server = base_url.rstrip("/") + "/"
        self.config = config
        self.guard = HostGuard(source_id, self.server)
        self._gate = gate or Unlimited(source_id)
        http = SourceHttp(source_id, self.guard, SourceCookies(), headers=basic_auth_header(config), gate=self._gate)
        self._http = http
        self.client = SuwayomiClient(source_id, self.server, config, http)
        self._source: ServerSource | None = None

    def resolve_source(self) -> ServerSource:
        """The server's source the settings name, looked up once per adapter (its name then labels errors)."""
        if self._source is None:
            config = self.config
            found = self.client.sources(config.source if config.source_is_id else None)
            try:
                self._source = pick_source(self.source_id, self.server, config.source, config.lang, found)
            except LookupError:
                name = config.source if not config.source_is_id else ""
                extensions = self.client.extensions(name) if name else []
                raise missing_source_error(
                    self.source_id, self.server, config.source, config.lang, extensions
                ) from None
            self.client.label = f"{self._source.display_name!r} ({self._source.id})"
        return self._source

    # --- the Source protocol --------------------------------------------------------------

    def list_page(self, n: int) -> tuple[list[SourceMangaRef], bool]:
        if n < 1:
            raise ValueError("list pages are numbered from 1")
        source = self.resolve_source()
        page = self.client.manga_page(source.id, listing_for(source, self.config, self.source_id), n)
        return [records.manga_ref(self.server, m) for m in page.mangas], page.has_next_page

    def manga_detail(self, ref: SourceMangaRef) -> MangaDetail:
        manga_id = records.manga_id_from_url(ref.url)
        if manga_id is None and ref.key.isdigit():
            manga_id = int(ref.key)
        if manga_id is None:
            raise NotFound(f"source {self.source_id!r}: {ref.url} is no manga of Suwayomi at {self.server}")
        self.resolve_source()
        manga = self.client.manga(manga_id)
        chapters = self.client.chapters(manga_id)
        return MangaDetail(
            metadata=records.metadata(manga),
            cover_url=records.cover_url(self.server, manga),
            chapters=records.source_chapters(self.server, chapters, scanlator=self.config.scanlator),
        )

    def chapter_pages(self, chapter: SourceChapter) -> list[str]:
        chapter_id = records.chapter_id(chapter)
        if chapter_id is None:
            raise NotFound(f"source {self.source_id!r}: chapter key {chapter.key!r} is no Suwayomi chapter id")
        urls = [urljoin(self.server, path) for path in self.client.pages(chapter_id)]
        for url in urls:
            # Refuse the whole chapter up front rather than store half of it.
            self.guard.check(url, what=f"page image of chapter {chapter.key}")
        return urls

    def open_image(self, url: str) -> HttpImageStream:
        return self._http.open_image(url)

    def close(self) -> None:
        self._http.close()
        self._gate.close()


def server_sources(base_url: str, *, settings: dict[str, str] | None = None) -> tuple[str, list[ServerSource]]:
    """A Suwayomi-Server's version and the sources it offers (for picking one when adding a source).

    `settings` may carry suwayomi_auth, suwayomi_username and suwayomi_password. Goes through the same guarded
    transport as a crawl, without a politeness gate: two requests, asked by an operator.
    """
    config = SuwayomiConfig.from_settings({"suwayomi_source": "-", **(settings or {})}, source_id="new")
    adapter = SuwayomiSource("new", base_url, config)
    try:
        return adapter.client.server_version(), adapter.client.sources()
    finally:
        adapter.close()
