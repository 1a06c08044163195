"""A ManhwaZ site: Madara's markup on a site that is not WordPress.

What it follows from the family as its sites run it (keiyoushi/extensions-source
`lib-multisrc/manhwaz/.../ManhwaZ.kt`, and the same sites in other scrapers'
Madara-derived parsers with "without ajax" and a `div.list-chapter` test):
- the home page: a `#slide-top > .item` slider of popular series, then the latest updates as
  Madara-style `div.page-item-detail` cards (`.item-thumb img`, `.item-summary a` title link),
  paged by `/?page=N` with `ul.pager a[rel=next]` while more pages exist;
- series at `/webtoon/{slug}`: `div.post-title h1`, `div.summary_image img` (lazy `data-src`),
  `div.summary-heading` + `div.summary-content` rows ("Author(s)", "Status"), `div.genres-content a`,
  `div.summary__content`, and the whole chapter list on the page (`li.wp-manga-chapter` with
  `span.chapter-release-date` printed relative: "3 days ago");
- chapters at `/webtoon/{slug}/chapter-N` with `div.page-break img`;
- no WordPress at all: no /wp-content/ assets, no admin-ajax.php (a POST there is a 404);
- images under `/images/` that answer 403 without a Referer on the site.
"""

from __future__ import annotations

import datetime as dt
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga, build_catalog
from testsupport.theme_sites.server import FixtureServer, Request, Response, html, not_found, png

PER_PAGE = 2


def days_ago(moment: dt.datetime, now: dt.datetime) -> str:
    """How the family prints every chapter date: whole units ago, never a calendar date."""
    delta = now - moment
    if delta < dt.timedelta(days=1):
        hours = max(1, int(delta.total_seconds() // 3600))
        return f"{hours} hour{'s' if hours > 1 else ''} ago"
    return f"{delta.days} day{'s' if delta.days > 1 else ''} ago"


class ManhwaZSite:
    def __init__(self, *, now: dt.datetime | None = None) -> None:
        self.now = now or dt.datetime.now(dt.UTC)
        self.catalog: list[FixtureManga] = build_catalog(self.now)
        self.server = FixtureServer(self.route, "manhwaz-site")
        self.base_url = self.server.base_url

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/webtoon/{manga.slug}"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/webtoon/{chapter.manga_slug}/{chapter.slug}"

    def cover_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/images/covers/{manga.slug}.png"

    def page_url(self, chapter: FixtureChapter, index: int) -> str:
        return f"{self.base_url}/images/{chapter.manga_slug}/{chapter.number}/{index}.png"

    def stop(self) -> None:
        self.server.stop()

    @property
    def page_count(self) -> int:
        return -(-len(self.catalog) // PER_PAGE)

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            page = request.query.get("page", "1")
            return html(self._home(int(page))) if page.isdigit() and 1 <= int(page) <= self.page_count else not_found()
        if parts[0] == "webtoon" and len(parts) in (2, 3) and (manga := self._manga(parts[1])):
            if len(parts) == 2:
                return html(self._detail(manga))
            chapter = next((c for c in manga.chapters if c.slug == parts[2]), None)
            return html(self._reader(manga, chapter)) if chapter else not_found()
        if parts[0] == "images":
            return self._image(request, parts[1:])
        return not_found()

    def _manga(self, slug: str) -> FixtureManga | None:
        return next((m for m in self.catalog if m.slug == slug), None)

    def _image(self, request: Request, parts: list[str]) -> Response:
        if not request.referer.startswith(self.base_url + "/"):
            return html("<h1>403 Forbidden</h1>", 403)
        if len(parts) == 2 and parts[0] == "covers" and (manga := self._manga(parts[1].removesuffix(".png"))):
            return png(manga.cover)
        if len(parts) == 3 and (manga := self._manga(parts[0])):
            chapter = next((c for c in manga.chapters if str(c.number) == parts[1]), None)
            index = parts[2].removesuffix(".png")
            if chapter and index.isdigit() and 1 <= int(index) <= len(chapter.pages):
                return png(chapter.pages[int(index) - 1])
        return not_found()

    def _page(self, title: str, body: str) -> str:
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='UTF-8'>"
            f"<title>{escape(title)} - ManhwaZ Fixture</title>"
            f"<link rel='stylesheet' href='{self.base_url}/assets/css/style.css'></head>"
            f"<body><div class='wrap'><div class='body-wrap'><div class='site-content'>{body}</div></div></div>"
            f"<script src='{self.base_url}/assets/js/app.js'></script></body></html>"
        )

    def _home(self, number: int) -> str:
        slider = "".join(
            f"<div class='item'><div class='img-item'><img src='{self.cover_url(m)}'></div>"
            f"<div class='info-item'><a href='{self.manga_url(m)}'>{escape(m.title)}</a></div></div>"
            for m in self.catalog[:3]
        )
        cards = "".join(
            "<div class='col-6 col-md-3'><div class='page-item-detail'>"
            f"<div class='item-thumb'><a href='{self.manga_url(m)}'><img data-src='{self.cover_url(m)}'></a></div>"
            f"<div class='item-summary'><div class='post-title'><h3><a href='{self.manga_url(m)}'>{escape(m.title)}</a>"
            "</h3></div></div></div></div>"
            for m in self.catalog[(number - 1) * PER_PAGE : number * PER_PAGE]
        )
        pager = "<ul class='pager'>"
        if number > 1:
            pager += f"<li><a rel='prev' href='{self.base_url}/?page={number - 1}'>&lsaquo;</a></li>"
        if number < self.page_count:
            pager += f"<li><a rel='next' href='{self.base_url}/?page={number + 1}'>&rsaquo;</a></li>"
        pager += "</ul>"
        body = (
            f"<div id='slide-top' class='owl-carousel'>{slider}</div>"
            f"<div class='page-listing-item'><div class='row'>{cards}</div></div>{pager}"
        )
        return self._page("ManhwaZ", body)

    def _detail(self, manga: FixtureManga) -> str:
        tags = "".join(f"<a href='{self.base_url}/genre/{t.lower()}' rel='tag'>{t}</a>" for t in manga.tags)
        chapters = "".join(
            f"<li class='wp-manga-chapter'><a href='{self.chapter_url(c)}'>{c.title}</a>"
            f"<span class='chapter-release-date'><i>{days_ago(c.published_at, self.now)}</i></span></li>"
            for c in reversed(manga.chapters)
        )
        body = (
            "<div class='profile-manga'><div class='post-title'>"
            f"<h1>{escape(manga.title)}</h1></div>"
            f"<div class='summary_image'><img data-src='{self.cover_url(manga)}' alt='{escape(manga.title)}'></div>"
            "<div class='summary_content'>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Alternative</h5></div>"
            f"<div class='summary-content'>{escape(', '.join(manga.alt_titles))}</div></div>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Author(s)</h5></div>"
            f"<div class='summary-content'>{escape(manga.author)}</div></div>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Status</h5></div>"
            f"<div class='summary-content'>{manga.status_word}</div></div>"
            f"<div class='post-content_item'><div class='genres-content'>{tags}</div></div></div></div>"
            f"<div class='description-summary'><div class='summary__content'><p>{escape(manga.description)}</p>"
            "</div></div>"
            f"<div class='list-chapter'><ul class='version-chap'>{chapters}</ul></div>"
        )
        return self._page(manga.title, body)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        breaks = "".join(
            f"<div class='page-break'><img src='{self.page_url(chapter, i)}'></div>"
            for i in range(1, len(chapter.pages) + 1)
        )
        body = f"<div class='reading-content'>{breaks}</div>"
        return self._page(f"{manga.title} {chapter.title}", body)
