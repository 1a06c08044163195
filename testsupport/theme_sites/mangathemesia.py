"""A MangaThemesia-theme site and its image CDN (another port): archive, series pages, ts_reader chapters.

What it follows from the theme as sites run it:
- the archive `/manga/?page=N&order=update` (or `/series/...` on sites that renamed it) with
  `.listupd .bs .bsx a[title]` cards and a `div.hpage a.r` "Next" link while more pages exist;
  past the last page an empty archive; `base_path` installs the site under a sub-path, `locale`
  prints it in another language;
- series pages with `h1.entry-title`, a lazy cover (`data-lazy-src` behind a `data:` placeholder)
  in `.thumb`, `.tsinfo .imptdt` rows ("Status <i>Ongoing</i>"), `.mgen` genres, alternative
  titles in a `.wd-full` block, and `#chapterlist li[data-num]` entries whose link holds both
  `span.chapternum` and `span.chapterdate` ("November 12, 2026"); with `bare_chapter_list` the list
  is printed as some sites print it, without `div.bxcl` or `#chapterlist` (`ul li` of
  `div.chbox div.eph-num` entries);
- a home page with the latest cards; every page links the MangaReader theme's stylesheet;
- chapters at `/{slug}-chapter-N/` whose `div#readerarea` is empty in the HTML: the theme's
  reader script fills it from `ts_reader.run({... "sources":[{"source":"Server 1","images":[...]}]})`;
- images on the CDN that answer 403 unless the Referer is the chapter page (pages) or a page of
  the site (covers).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga, build_catalog
from testsupport.theme_sites.locales import ENGLISH, SiteLocale
from testsupport.theme_sites.server import FixtureServer, Request, Response, html, not_found, png

PER_PAGE = 2
PLACEHOLDER = (
    "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%20225%20318'%3E%3C/svg%3E"
)
_READER_SCRIPT = """<script>
var ts_reader = {run: function (o) {
  var area = document.getElementById("readerarea");
  o.sources[0].images.forEach(function (url, i) {
    var img = document.createElement("img");
    img.className = "ts-main-image"; img.setAttribute("data-index", i); img.src = url;
    area.appendChild(img);
  });
}};
</script>"""


class MangaThemesiaSite:
    def __init__(
        self,
        *,
        directory: str = "manga",
        now: dt.datetime | None = None,
        base_path: str = "",
        locale: SiteLocale = ENGLISH,
        bare_chapter_list: bool = False,
        catalog: list[FixtureManga] | None = None,
    ) -> None:
        self.directory = directory
        self.base_path = base_path.rstrip("/")
        self.locale = locale
        self.bare_chapter_list = bare_chapter_list
        self.now = now or dt.datetime.now(dt.UTC)
        self.catalog: list[FixtureManga] = catalog if catalog is not None else build_catalog(self.now)
        self.cdn = FixtureServer(self.cdn_route, "mangathemesia-cdn")
        self.server = FixtureServer(self.route, "mangathemesia-site")
        self.base_url = self.server.base_url + self.base_path

    # --- expectations for tests ---------------------------------------------------------------

    def cover_url(self, manga: FixtureManga) -> str:
        return f"{self.cdn.base_url}/uploads/covers/{manga.slug}.png"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/{chapter.manga_slug}-{chapter.slug}/"

    def page_url(self, chapter: FixtureChapter, index: int) -> str:
        return f"{self.cdn.base_url}/uploads/{chapter.manga_slug}/{chapter.number}/{index:02d}.png"

    def stop(self) -> None:
        self.server.stop()
        self.cdn.stop()

    # --- the site -----------------------------------------------------------------------------

    def label(self, chapter: FixtureChapter) -> str:
        return chapter.label or self.locale.label(chapter.number)

    def route(self, request: Request) -> Response:
        if self.base_path:  # nothing answers outside the install's sub-path but the host's own 404
            if not (request.path + "/").startswith(self.base_path + "/"):
                return not_found()
            request = dataclasses.replace(request, path=request.path[len(self.base_path) :] or "/")
        if request.method != "GET":
            return html("0", 400)
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return html(self._page("Home", f"<div class='bixbox'><div class='listupd'>{self._cards(1)}</div></div>"))
        if request.path.startswith("/wp-content/themes/mangareader/"):
            return Response(200, b"", "text/css")
        if parts == [self.directory]:
            page = request.query.get("page", "1")
            return html(self._archive(int(page))) if page.isdigit() and int(page) >= 1 else not_found()
        if len(parts) == 2 and parts[0] == self.directory and (manga := self._manga(parts[1])):
            return html(self._series(manga))
        if len(parts) == 1:
            for manga in self.catalog:
                for chapter in manga.chapters:
                    if parts[0] == f"{manga.slug}-{chapter.slug}":
                        return html(self._reader(manga, chapter))
        return not_found()

    def cdn_route(self, request: Request) -> Response:
        parts = [p for p in request.path.split("/") if p]
        if len(parts) == 3 and parts[:2] == ["uploads", "covers"]:
            manga = self._manga(parts[2].removesuffix(".png"))
            if manga is None:
                return not_found()
            return png(manga.cover) if request.referer.startswith(self.base_url) else html("Forbidden", 403)
        if len(parts) == 4 and parts[0] == "uploads" and (manga := self._manga(parts[1])):
            chapter = next((c for c in manga.chapters if str(c.number) == parts[2]), None)
            index = parts[3].removesuffix(".png")
            if chapter is None or not index.isdigit() or not 1 <= int(index) <= len(chapter.pages):
                return not_found()
            if not request.referer.startswith(self.chapter_url(chapter)):
                return html("<h1>403 Forbidden</h1><p>Hotlinking is not allowed.</p>", 403)
            return png(chapter.pages[int(index) - 1])
        return not_found()

    def _manga(self, slug: str) -> FixtureManga | None:
        return next((m for m in self.catalog if m.slug == slug), None)

    # --- markup -------------------------------------------------------------------------------

    def _page(self, title: str, body: str, *, head: str = "") -> str:
        return (
            f"<!DOCTYPE html><html lang='{self.locale.code}'><head><meta charset='UTF-8'>"
            f"<title>{escape(title)} - Themesia Fixture</title>"
            f"<link rel='stylesheet' id='style-css' href='{self.base_url}/wp-content/themes/mangareader/style.css'>"
            f"{head}</head>"
            f"<body class='darkmode'><div id='content'><div class='wrapper'>{body}</div></div></body></html>"
        )

    def _cards(self, number: int) -> str:
        start = (number - 1) * PER_PAGE
        cards = []
        for manga in self.catalog[start : start + PER_PAGE]:
            cards.append(
                "<div class='bs'><div class='bsx'>"
                f"<a href='{self.base_url}/{self.directory}/{manga.slug}/' title='{escape(manga.title)}'>"
                "<div class='limit'><div class='ply'></div><span class='type Manhwa'></span>"
                f"<img src='{self.cover_url(manga)}' class='ts-post-image wp-post-image' title='{escape(manga.title)}'"
                f" alt='{escape(manga.title)}' width='158' height='225'></div>"
                f"<div class='bigor'><div class='tt'> {escape(manga.title)} </div>"
                f"<div class='adds'><div class='epxs'>{escape(self.label(manga.chapters[-1]))}</div></div></div></a>"
                "</div></div>"
            )
        return "".join(cards)

    def _archive(self, number: int) -> str:
        more = number * PER_PAGE < len(self.catalog)
        pager = "<div class='hpage'>"
        if number > 1:
            pager += (
                f"<a href='{self.base_url}/{self.directory}/?page={number - 1}&amp;order=update' class='l'>Previous</a>"
            )
        if more:
            pager += (
                f"<a href='{self.base_url}/{self.directory}/?page={number + 1}&amp;order=update' class='r'>Next</a>"
            )
        pager += "</div>"
        body = (
            "<div class='postbody'><div class='bixbox seriesearch'><div class='mrgn'>"
            f"<div class='listupd'>{self._cards(number)}</div>{pager}</div></div></div>"
        )
        return self._page("Manga", body)

    def status_word(self, manga: FixtureManga) -> str:
        return manga.status_word if self.locale is ENGLISH else self.locale.statuses[manga.status]

    def _chapter_block(self, items: str) -> str:
        if self.bare_chapter_list:
            return f"<div class='bixbox epcheck'><div class='eplister'><ul class='clstyle'>{items}</ul></div></div>"
        return (
            "<div class='bixbox bxcl epcheck'><div class='releases'><h2>Chapters</h2></div>"
            f"<div class='eplister' id='chapterlist'><ul class='clstyle'>{items}</ul></div></div>"
        )

    def _series(self, manga: FixtureManga) -> str:
        heading = self.locale.headings
        genres = "".join(f"<a href='{self.base_url}/genres/{t.lower()}/' rel='tag'>{t}</a>" for t in manga.tags)
        items = "".join(
            f"<li data-num='{c.number}'><div class='chbox'><div class='eph-num'>"
            f"<a href='{self.chapter_url(c)}'><span class='chapternum'>{escape(self.label(c))}</span>"
            f"<span class='chapterdate'>{self.locale.calendar(c.published_at)}</span></a></div>"
            f"<div class='dt'><a href='{self.chapter_url(c)}' class='dload' download><i class='fas fa-download'></i></a>"
            "</div></div></li>"
            for c in reversed(manga.chapters)
        )
        body = (
            f"<div class='postbody'><article id='post-{manga.post_id}' class='post-{manga.post_id} hentry'>"
            "<div class='main-info'><div class='info-left'><div class='info-left-margin'>"
            "<div class='thumb' itemprop='image' itemscope itemtype='https://schema.org/ImageObject'>"
            f"<img src='{PLACEHOLDER}' data-lazy-src='{self.cover_url(manga)}' class='attachment- size- wp-post-image'"
            f" alt='{escape(manga.title)}' title='{escape(manga.title)}'></div>"
            "<div class='tsinfo bixbox'>"
            f"<div class='imptdt'>{heading['status']} <i>{self.status_word(manga)}</i></div>"
            "<div class='imptdt'>Type <a href='#'>Manhwa</a></div>"
            f"<div class='imptdt'>{heading['author']} <i>{escape(manga.author)}</i></div>"
            "<div class='imptdt'>Posted By <span><i>admin</i></span></div>"
            "</div></div></div>"
            "<div class='info-right'><div class='info-desc bixbox'><div id='titledesc'>"
            f"<h1 class='entry-title' itemprop='name'>{escape(manga.title)}</h1>"
            f"<div class='wd-full'><b>{heading['alt']}</b> <span>{escape(', '.join(manga.alt_titles))}</span></div>"
            f"<div class='wd-full'><span class='mgen'>{genres}</span></div>"
            "<div class='wd-full'><h2>Synopsis</h2><div class='entry-content entry-content-single'"
            f" itemprop='description'><p>{escape(manga.description)}</p></div></div>"
            "</div></div></div></div>"
            f"{self._chapter_block(items)}"
            "</article></div>"
        )
        return self._page(manga.title, body)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        options = {
            "post_id": manga.post_id * 10 + chapter.number,
            "noimagehtml": "<center><h4>NO IMAGE YET</h4></center>",
            "prevUrl": "",
            "nextUrl": "",
            "mode": "full",
            "sources": [
                {"source": "Server 1", "images": [self.page_url(chapter, i) for i in range(1, len(chapter.pages) + 1)]}
            ],
            "lazyload": True,
            "defaultSource": "Server 1",
            "lazyloadPlaceHolder": f"{self.base_url}/wp-content/themes/mangareader/assets/images/readerarea.svg",
            "progressBar": True,
            "contentmode": "advanced",
        }
        # WordPress escapes "/" in JSON it prints into pages.
        run = json.dumps(options).replace("/", "\\/")
        body = (
            f"<div class='chapterbody'><div class='postarea'><article id='post-{options['post_id']}' class='hentry'>"
            f"<div class='headpost'><h1 class='entry-title'>{escape(manga.title)} {escape(self.label(chapter))}</h1></div>"
            "<div class='entry-content entry-content-single maincontent'>"
            "<div id='readerarea' class='rdminimal'></div></div></article></div></div>"
            f"<script>ts_reader.run({run});</script>"
        )
        return self._page(f"{manga.title} {self.label(chapter)}", body, head=_READER_SCRIPT)
