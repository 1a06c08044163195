"""A ZeistManga site: a Blogger blog whose series and chapters are posts read through Blogger's JSON feed.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/zeistmanga/.../ZeistManga.kt` and `ZeistMangaDto.kt`; per-site
extensions `src/ar/mangaalarab`, `src/id/shiyurasub`, `src/pt/lerhentai`
mostly change the page selector or the categories), and Blogger's published
feed conventions (`/feeds/posts/default/-/{label}?alt=json`, `start-index`
from 1, `max-results`, `openSearch$totalResults`, `$t` text nodes):
- every page says `<meta name='generator' content='Blogger'/>`; the site is found by probing
  `/feeds/posts/default?alt=json&max-results=0` (a Blogger feed answers);
- `/feeds/posts/default/-/Series?alt=json&orderby=published&start-index=N&max-results=M`: the series
  posts, newest first, `entry[].title.$t`, `entry[].link[rel=alternate].href`, `category[].term`;
- a series post `/2026/11/{slug}.html`: the profile `.grid.gtc-235fr` (cover `img`, `header > p`
  alternative names, `#synopsis`, `span#author`, `.y6x11p` rows "Status" / `span.dt`,
  `div.mt-15 > a[rel=tag]` genres) and `#clwd > script` calling `clwd.run('{label}')`;
- `/feeds/posts/default/-/Chapter/{label}?alt=json&start-index=N&max-results=M`: the chapter posts,
  titles "{series} Chapter N", `published.$t` with the blog's zone (-08:00 here);
- a chapter post `/2026/11/{slug}-chapter-N.html`: `div.check-box div.separator img[src]`;
- images on the blog's own host under `/img/` (Blogger's image host on a real site).
"""

from __future__ import annotations

import datetime as dt
import json
from html import escape
from urllib.parse import unquote

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite
from testsupport.theme_sites.server import Request, Response, html, not_found, png

BLOG_ZONE = dt.timezone(dt.timedelta(hours=-8))
STATUS_WORDS = {"ongoing": "Ongoing", "completed": "Completed", "hiatus": "Hiatus", "cancelled": "Cancelled"}


def blogger_time(moment: dt.datetime) -> str:
    """Blogger prints times in the blog's zone with milliseconds: 2026-11-01T16:00:00.000-08:00."""
    local = moment.astimezone(BLOG_ZONE)
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}-08:00"


class ZeistMangaSite(FamilySite):
    name = "zeistmanga-site"

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/2026/11/{manga.slug}.html"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/2026/11/{chapter.manga_slug}-{chapter.slug}.html"

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        if request.path in ("", "/"):
            return html(self._page("ZeistManga Fixture", "<div class='PopularPosts'><div class='grid'></div></div>"))
        if request.path.startswith("/feeds/posts/default"):
            return self._feed(request)
        if request.path.startswith("/2026/11/") and request.path.endswith(".html"):
            slug = request.path.removeprefix("/2026/11/").removesuffix(".html")
            if manga := self._manga(slug):
                return html(self._series(manga))
            for manga in self.catalog:
                for chapter in manga.chapters:
                    if slug == f"{manga.slug}-{chapter.slug}":
                        return html(self._reader(manga, chapter))
        if request.path.startswith("/img/"):
            return self._image([p for p in request.path.split("/") if p][1:])
        return not_found()

    def _manga(self, slug: str) -> FixtureManga | None:
        return next((m for m in self.catalog if m.slug == slug), None)

    def _page(self, title: str, body: str) -> str:
        return (
            "<!DOCTYPE html><html dir='ltr' lang='en'><head><meta charset='UTF-8'>"
            "<meta content='blogger' name='generator'/>"
            f"<title>{escape(title)}</title>"
            f"<link rel='alternate' type='application/atom+xml' href='{self.base_url}/feeds/posts/default'/>"
            f"</head><body>{body}</body></html>"
        )

    def _entry(self, title: str, url: str, published: dt.datetime, labels: list[str]) -> dict[str, object]:
        return {
            "id": {"$t": f"tag:blogger.com,1999:blog-1.post-{abs(hash(url)) % 10**9}"},
            "published": {"$t": blogger_time(published)},
            "updated": {"$t": blogger_time(published)},
            "category": [{"scheme": "http://www.blogger.com/atom/ns#", "term": label} for label in labels],
            "title": {"type": "text", "$t": title},
            "link": [
                {"rel": "replies", "type": "text/html", "href": url + "#comment-form"},
                {"rel": "self", "type": "application/atom+xml", "href": f"{self.base_url}/feeds/posts/default/1"},
                {"rel": "alternate", "type": "text/html", "href": url, "title": title},
            ],
        }

    def _feed(self, request: Request) -> Response:
        if request.query.get("alt") != "json":
            return Response(200, b"<?xml version='1.0'?><feed/>", "application/atom+xml")
        labels = [unquote(p) for p in request.path.removeprefix("/feeds/posts/default").split("/") if p][1:]
        if request.path.startswith("/feeds/posts/default/-/") and not labels:
            return not_found()
        if not labels:
            entries = [
                self._entry(m.title, self.manga_url(m), m.chapters[-1].published_at, ["Series"]) for m in self.catalog
            ]
        elif labels == ["Series"]:
            entries = [
                self._entry(m.title, self.manga_url(m), m.chapters[-1].published_at, ["Series", *m.tags])
                for m in self.catalog
            ]
        elif (
            labels[0] == "Chapter"
            and len(labels) == 2
            and (manga := next((m for m in self.catalog if m.title == labels[1]), None))
        ):
            entries = [
                self._entry(
                    f"{manga.title} Chapter {c.number}", self.chapter_url(c), c.published_at, ["Chapter", manga.title]
                )
                for c in reversed(manga.chapters)
            ]
        else:
            entries = []
        start, size = request.query.get("start-index", "1"), request.query.get("max-results", "25")
        if not (start.isdigit() and size.isdigit() and int(start) >= 1):
            return Response(400, b"Invalid start-index", "text/plain")
        page = entries[int(start) - 1 : int(start) - 1 + min(int(size), 150)]
        feed: dict[str, object] = {
            "openSearch$totalResults": {"$t": str(len(entries))},
            "openSearch$startIndex": {"$t": start},
            "openSearch$itemsPerPage": {"$t": size},
        }
        if page:
            feed["entry"] = page  # Blogger leaves "entry" out of an empty page
        body = {"version": "1.0", "encoding": "UTF-8", "feed": feed}
        return Response(200, json.dumps(body).encode(), "application/json; charset=UTF-8")

    def _series(self, manga: FixtureManga) -> str:
        tags = "".join(f"<a href='{self.base_url}/search/label/{t}' rel='tag'>{escape(t)}</a>" for t in manga.tags)
        body = (
            "<main><div class='grid gtc-235fr'>"
            f"<div class='thumb'><img src='{self.base_url}/img/covers/{manga.slug}.png' alt=''></div>"
            f"<div><header><h1 itemprop='name'>{escape(manga.title)}</h1>"
            f"<p>{escape(', '.join(manga.alt_titles))}</p></header>"
            f"<div id='synopsis'><p>{escape(manga.description)}</p></div>"
            f"<div class='y6x11p'><strong>Author</strong><span class='dt'><span id='author'>{escape(manga.author)}"
            "</span></span></div>"
            f"<div class='y6x11p'><strong>Status</strong><span class='dt'>{STATUS_WORDS[manga.status]}</span></div>"
            f"<div class='mt-15'>{tags}</div></div></div>"
            "<div id='clwd'><div id='chapterlist'></div>"
            f"<script>clwd.run('{manga.title}');</script></div></main>"
        )
        return self._page(manga.title, body)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        images = "".join(
            f"<div class='separator'><a href='#'><img src='{self.base_url}/img/{manga.slug}/{chapter.number}/{i}.png'>"
            "</a></div>"
            for i in range(1, len(chapter.pages) + 1)
        )
        body = f"<article><h1>{escape(manga.title)} Chapter {chapter.number}</h1><div class='check-box'>{images}</div></article>"
        return self._page(f"{manga.title} Chapter {chapter.number}", body)

    def _image(self, parts: list[str]) -> Response:
        if len(parts) == 2 and parts[0] == "covers" and (manga := self._manga(parts[1].removesuffix(".png"))):
            return png(manga.cover)
        if len(parts) == 3 and (manga := self._manga(parts[0])):
            chapter = next((c for c in manga.chapters if str(c.number) == parts[1]), None)
            index = parts[2].removesuffix(".png")
            if chapter and index.isdigit() and 1 <= int(index) <= len(chapter.pages):
                return png(chapter.pages[int(index) - 1])
        return not_found()
