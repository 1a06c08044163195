"""The html adapter's second request for a manga's chapters: the theme's ajax chapter list, its fallback, its pages.

Many themes (Madara's `ajax/chapters/`, MangaThemesia's `admin-ajax.php`,
JSON APIs) leave the detail page's chapter list empty and serve it from
another endpoint. Which one, with what body, and how it pages are settings
(`chapter_list_url`, `chapter_list_fallback_url`, `chapter_list_page_size`,
`chapter_list_total`); the rules for following them live here, apart from
the adapter's page loading, because they are their own concern: a 4xx that
means "not this endpoint" moves on to the fallback, a list that takes
several requests stops on a short, empty or repeated answer, or the stated
total, or `MAX_CHAPTER_LIST_REQUESTS`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from selectolax.parser import HTMLParser

from sources import fields, json_parsing, parsing
from sources.answers import FetchedPage, raise_for_status
from sources.config import HtmlSourceConfig
from sources.config_keys import template_fields
from sources.errors import SelectorMatchedNothing, SourceConfigError
from sources.hosts import HostGuard
from sources.http import SourceHttp
from sources.paging import MAX_CHAPTER_LIST_REQUESTS, Endpoint, paging_values
from sources.site_urls import site_url

logger = logging.getLogger(__name__)

_XHR_HEADERS = {"X-Requested-With": "XMLHttpRequest"}
# Answers to an ajax chapter request that say "this endpoint is not the one", not "try later".
_NOT_THIS_ENDPOINT = frozenset(range(400, 500)) - {401, 403, 408, 429}

# (answer parsed, its text, the manga's URL, template values) -> the chapters it lists.
ChaptersIn = Callable[[object, str, str, dict[str, object]], parsing.ChapterParse]


def answer_document(answer: FetchedPage) -> object:
    """An ajax answer parsed as what it is: JSON when it says or looks so, else HTML."""
    try:
        return json_parsing.decode_answer(answer.html, answer.content_type)
    except json_parsing.NotJson:
        return HTMLParser(answer.html)


@dataclass(frozen=True)
class ChapterListRequests:
    """One adapter's chapter-list requests: over its HTTP client, through its host guard."""

    source_id: str
    base_url: str
    config: HtmlSourceConfig
    guard: HostGuard
    http: SourceHttp
    chapters_in: ChaptersIn

    def fetch(self, page: FetchedPage, captured: dict[str, object]) -> tuple[parsing.ChapterParse, str]:
        """The chapter list from the theme's second request (with its fallback on a 4xx answer), and its URL.

        With `chapter_list_page_size` the list takes several requests ({page}, {offset}, {start_index}):
        they go on until an answer lists fewer items than a page holds, lists nothing new, or the stated
        `chapter_list_total` is reached.
        """
        config = self.config
        manga_url = page.url.split("?")[0].rstrip("/") if not config.detail_url else str(captured["manga_url"])
        values = {**captured, "manga_url": manga_url, "id": "", **paging_values(1, config.chapter_list_page_size)}
        attempts = [("chapter_list_url", config.chapter_list_url, config.chapter_list_method, config.chapter_list_body)]
        if config.chapter_list_fallback_url:
            attempts.append(
                (
                    "chapter_list_fallback_url",
                    config.chapter_list_fallback_url,
                    config.chapter_list_fallback_method,
                    config.chapter_list_fallback_body,
                )
            )
        for index, (key, template, method, body) in enumerate(attempts):
            assert template is not None
            used = template_fields(template) | {f for _, v in body for f in template_fields(v)}
            if "id" in used and not values["id"]:
                values["id"] = self._chapter_list_id(page)
            endpoint = Endpoint(key, template, method, body)
            answer = self._request(endpoint, values, referer=page.url, check=False)
            url = answer.url
            if answer.status in _NOT_THIS_ENDPOINT:
                if index + 1 < len(attempts):
                    logger.info(
                        "source %s: %s %s answered %d; trying the fallback", self.source_id, method, url, answer.status
                    )
                    continue
                raise SourceConfigError(
                    f"source {self.source_id!r}: settings key {key!r}: {method} {url} answered {answer.status} "
                    f"(for {page.url})"
                )
            raise_for_status(self.source_id, answer.status, answer.url)
            parsed = self.chapters_in(answer_document(answer), answer.html, page.url, values)
            if config.chapter_list_page_size:
                parsed = self._more_chapters(parsed, answer, endpoint, values, page.url)
            return parsed, answer.url
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _more_chapters(
        self,
        first: parsing.ChapterParse,
        answer: FetchedPage,
        endpoint: Endpoint,
        values: dict[str, object],
        manga_url: str,
    ) -> parsing.ChapterParse:
        """The rest of a chapter list that takes several requests, merged with its first answer."""
        config = self.config
        size = config.chapter_list_page_size
        total = json_parsing.total_of(answer_document(answer), config.chapter_list_total)
        chapters = {c.key: c for c in first.chapters}
        items, skipped = first.items, first.skipped
        number, last = 1, first
        while (
            last.items == size
            and (total is None or number * (size or 0) < total)
            and number < MAX_CHAPTER_LIST_REQUESTS
        ):
            number += 1
            values = {**values, **paging_values(number, size)}
            answer = self._request(endpoint, values, referer=manga_url, check=True)
            last = self.chapters_in(answer_document(answer), answer.html, manga_url, values)
            fresh = [c for c in last.chapters if c.key not in chapters]
            if not fresh and not last.skipped:
                break
            chapters.update((c.key, c) for c in fresh)
            items, skipped = items + last.items, skipped + last.skipped
        ordered = sorted(chapters.values(), key=parsing._reading_order)
        return parsing.ChapterParse(tuple(ordered), items, skipped)

    def _request(self, endpoint: Endpoint, values: dict[str, object], *, referer: str, check: bool) -> FetchedPage:
        """One request of a chapter list."""
        url = site_url(self.base_url, fields.fill(endpoint.template, values) or "")
        self.guard.check(url, what=f"{endpoint.key} request")
        return self.http.request_page(
            url,
            method=endpoint.method,
            data={name: fields.fill(v, values) or "" for name, v in endpoint.body} or None,
            headers={**_XHR_HEADERS, "Referer": referer},
            check=check,
        )

    def _chapter_list_id(self, page: FetchedPage) -> str:
        """The manga's id the chapter-list request names ({id}), read from its detail page."""
        spec = self.config.spec("chapter_list_id")
        value = spec.first(HTMLParser(page.html)) if spec else ""
        if not value:
            raise SelectorMatchedNothing(self.source_id, "chapter_list_id", self.config.chapter_list_id or "", page.url)
        return value
