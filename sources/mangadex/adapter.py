"""The `mangadex` adapter: MangaDex's public API walked newest first, pages through MangaDex@Home.

- The list is `GET /manga` ordered by `latestUploadedChapter` descending,
  100 a page, with the cover, authors and artists expanded (`includes[]`)
  and only mangas with chapters in the source's `translated_languages`;
  the metadata pass's early stop then ends the walk at the first manga
  with nothing new.
- A manga's chapters are its feed (`GET /manga/{id}/feed`) in those
  languages, by volume and chapter, paged to the end. Chapters hosted
  elsewhere (`externalUrl`) and unavailable ones are skipped and counted
  (`notes`), so the pass reports them instead of failing on them.
- A chapter's pages come from `GET /at-home/server/{chapter}` (full quality
  or `data_saver`), which has its own limit of 40 a minute: each call takes
  a token from the source's at-home bucket too. Each at-home image is
  reported to MangaDex when its download ends (`report`).

Every request goes through the source's gate (MangaDex's ~5 a second per
IP) with the descriptive User-Agent MangaDex requires (MANGADEX_USER_AGENT).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from sources.base import ImageStream, MangaDetail, SourceChapter, SourceMangaRef
from sources.cookies import SourceCookies
from sources.mangadex import records
from sources.mangadex.report import AtHomeReporter, ReportedImage, report_outcome
from sources.mangadex.settings import MangaDexSettings
from sources.mangadex.transport import MangaDexGuard, MangaDexHttp
from sources.politeness.gate import RequestGate, Unlimited

logger = logging.getLogger(__name__)

LIST_LIMIT = 100  # the most /manga serves a page
FEED_LIMIT = 500  # the most /manga/{id}/feed serves a page
# The API reads no further than offset + limit = 10,000 into a collection.
COLLECTION_WINDOW = 10_000
MANGA_INCLUDES = ("cover_art", "author", "artist")


class MangaDexSource:
    def __init__(
        self,
        source_id: str,
        settings: MangaDexSettings,
        *,
        user_agent: str,
        gate: RequestGate | None = None,
        at_home_gate: RequestGate | None = None,
    ) -> None:
        self.source_id = source_id
        self.settings = settings
        self.notes = records.FeedNotes()
        self.guard = MangaDexGuard(source_id, settings.api_url, settings.uploads_url, settings.at_home_hosts)
        self._gate = gate or Unlimited(source_id)
        self._at_home_gate = at_home_gate or Unlimited(source_id)
        self._http = MangaDexHttp(
            source_id,
            self.guard,
            SourceCookies(),
            headers={"User-Agent": user_agent, "Accept": "application/json"},
            gate=self._gate,
        )
        self.reporter = AtHomeReporter(source_id, settings.report_url, user_agent)
        # Where list page n starts: pages are paged by what the API served, which may be fewer than asked.
        self._list_offsets: dict[int, int] = {1: 0}
        # Mangas of the list pages read so far, so a manga's detail needs no second request.
        self._listed: dict[str, Mapping[str, Any]] = {}

    # --- the Source protocol --------------------------------------------------------------

    def list_page(self, n: int) -> tuple[list[SourceMangaRef], bool]:
        if n < 1:
            raise ValueError("list pages are numbered from 1")
        offset = self._list_offsets.get(n, (n - 1) * LIST_LIMIT)
        params = [
            ("limit", str(LIST_LIMIT)),
            ("offset", str(offset)),
            ("order[latestUploadedChapter]", "desc"),
            *self._manga_params(),
            *(("availableTranslatedLanguage[]", language) for language in self.settings.translated_languages),
            ("hasAvailableChapters", "true"),
        ]
        data, total = records.collection_page(self._get("/manga", params), f"manga list page {n}")
        languages = self.settings.title_languages
        refs = []
        for manga in data:
            ref = records.manga_ref(manga, languages)
            self._listed[ref.key] = manga
            refs.append(ref)
        following = records.next_offset(offset, len(data), total, window=COLLECTION_WINDOW)
        if following is not None:
            self._list_offsets[n + 1] = following
        return refs, following is not None

    def manga_detail(self, ref: SourceMangaRef) -> MangaDetail:
        manga = self._listed.pop(ref.key, None)
        if manga is None:
            # /manga/{id} takes the expansions only (a content rating filter is for collections).
            answer = self._get(f"/manga/{ref.key}", [("includes[]", name) for name in MANGA_INCLUDES])
            manga = answer.get("data") or {}
        languages = self.settings.title_languages
        return MangaDetail(
            metadata=records.manga_metadata(manga, languages),
            cover_url=records.cover_url(manga, self.settings.uploads_url),
            chapters=tuple(self._feed(ref.key)),
        )

    def chapter_pages(self, chapter: SourceChapter) -> list[str]:
        # The at-home server's own limit (40 a minute): a token from its bucket before the request's own.
        self._at_home_gate.acquire(slot=False).release()
        answer = self._get(f"/at-home/server/{chapter.key}", [])
        urls = records.page_urls(answer, data_saver=self.settings.data_saver)
        for url in urls:
            # Refuse the whole chapter up front rather than store half of it.
            self.guard.check(url, what=f"page image of chapter {chapter.key}")
        return urls

    def open_image(self, url: str) -> ImageStream:
        if not records.is_at_home_image(url, self.settings.uploads_url):
            return self._http.open_image(url)
        started = time.monotonic()
        report = report_outcome(self.reporter, url)
        try:
            stream = self._http.open_image(url)
        except Exception:
            report(False, False, 0, round((time.monotonic() - started) * 1000))
            raise
        return ReportedImage(stream, started, report)

    def close(self) -> None:
        notes = self.notes
        if notes.external_chapters or notes.unavailable_chapters:
            logger.info(
                "source %s: skipped %d external and %d unavailable chapter(s) (MangaDex serves no pages for them)",
                self.source_id,
                notes.external_chapters,
                notes.unavailable_chapters,
            )
        self._http.close()
        self._gate.close()
        self._at_home_gate.close()

    # --- requests ---------------------------------------------------------------------------

    def _manga_params(self) -> list[tuple[str, str]]:
        return [
            *(("includes[]", name) for name in MANGA_INCLUDES),
            *(("contentRating[]", rating) for rating in self.settings.content_ratings),
        ]

    def _feed(self, manga_id: str) -> list[SourceChapter]:
        chapters: list[SourceChapter] = []
        offset: int | None = 0
        while offset is not None:
            params = [
                ("limit", str(FEED_LIMIT)),
                ("offset", str(offset)),
                *(("translatedLanguage[]", language) for language in self.settings.translated_languages),
                *(("contentRating[]", rating) for rating in self.settings.content_ratings),
                ("order[volume]", "asc"),
                ("order[chapter]", "asc"),
                # A chapter a group scheduled for later has no readable pages until then: listed once it has.
                ("includeFuturePublishAt", "0"),
            ]
            answer = self._get(f"/manga/{manga_id}/feed", params)
            data, total = records.collection_page(answer, f"the chapter feed of manga {manga_id}")
            for entry in data:
                chapter = records.feed_chapter(entry, self.notes)
                if chapter is not None:
                    chapters.append(chapter)
            offset = records.next_offset(offset, len(data), total, window=COLLECTION_WINDOW)
        return chapters

    def _get(self, path: str, params: list[tuple[str, str]]) -> dict[str, Any]:
        url = self.settings.api_url + path + (f"?{urlencode(params)}" if params else "")
        page = self._http.request_page(url)
        try:
            answer = json.loads(page.html)
        except json.JSONDecodeError as exc:
            raise records.AnswerUnreadable(f"source {self.source_id!r}: {url} answered no JSON: {exc}") from exc
        if not isinstance(answer, dict):
            raise records.AnswerUnreadable(f"source {self.source_id!r}: {url} answered no JSON object")
        return answer
