"""A My Manga Reader CMS site (Laravel): Bootstrap pages, latest releases, chapters named after the manga.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/mmrcms/.../MMRCMS.kt`; per-site extensions `src/fr/scanvf`,
`src/ar/mangaae`, `src/es/lectormangalat` change the date format, the item
path or the title selector):
- the home page: a "Latest Manga Releases" `div.mangalist div.manga-item` block (`h3.manga-heading a`),
  navigation to `/latest-release` and `/filterList`;
- `/latest-release?page=N`: the same items, newest first, `.pagination a[rel=next]` while more follow;
- `/manga/{slug}`: `h2.widget-title`, `.row img.img-responsive` cover, `dl.dl-horizontal` of `dt`/`dd`
  ("Status", "Author(s)", "Other names", "Categories" with links), `.row .well` with an `h5` heading and
  the summary `<p>`, and `ul.chapters > li` rows: `h5.chapter-title-rtl` holding
  `<a href="/manga/{slug}/{n}">{Manga} {n}</a> : <em>{title}</em>` and `.date-chapter-title-rtl`
  "2 Nov. 2026" ("d MMM. yyyy");
- `/manga/{slug}/{n}`: `#all > img.img-responsive` with `data-src` (a placeholder in `src`);
- images under `/uploads/manga/` answer 403 without the site as Referer.
"""

from __future__ import annotations

import datetime as dt
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite, cover_or_page, find_chapter, find_manga
from testsupport.theme_sites.server import Request, Response, html, not_found

STATUS_WORDS = {"ongoing": "Ongoing", "completed": "Complete", "hiatus": "On Hold", "cancelled": "Dropped"}


def mmrcms_date(moment: dt.datetime) -> str:
    return f"{moment.day} {moment.strftime('%b')}. {moment.year}"


class MMRCMSSite(FamilySite):
    name = "mmrcms-site"

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/manga/{manga.slug}"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/manga/{chapter.manga_slug}/{chapter.number}"

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return html(self._page("Home", self._items(self.list_slice(1)), 0))
        if parts == ["latest-release"]:
            page = request.query.get("page", "1")
            if not page.isdigit() or not 1 <= int(page) <= self.page_count:
                return html(self._page("Latest", "<div class='mangalist'></div>", 0))
            number = int(page)
            return html(self._page("Latest", self._items(self.list_slice(number)), number))
        if parts[0] == "manga" and len(parts) in (2, 3) and (manga := find_manga(self.catalog, parts[1])):
            if len(parts) == 2:
                return html(self._detail(manga))
            chapter = find_chapter(manga, parts[2])
            return html(self._reader(manga, chapter)) if chapter else not_found()
        if parts[:2] == ["uploads", "manga"]:
            if not request.referer.startswith(self.base_url + "/"):
                return html("<h1>403 Forbidden</h1>", 403)
            return cover_or_page(self.catalog, parts[2:])
        return not_found()

    def _page(self, title: str, body: str, number: int) -> str:
        pager = ""
        if number and number < self.page_count:
            pager = f"<ul class='pagination'><li><a href='{self.base_url}/latest-release?page={number + 1}' rel='next'>&raquo;</a></li></ul>"
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{escape(title)} - MMRCMS Fixture</title>"
            f"<link href='{self.base_url}/css/bootstrap.min.css' rel='stylesheet'></head><body>"
            f"<nav class='navbar'><a href='{self.base_url}/latest-release'>Latest Release</a>"
            f"<a href='{self.base_url}/filterList'>Manga List</a></nav>"
            f"<div class='container'>{body}{pager}</div></body></html>"
        )

    def _items(self, mangas: list[FixtureManga]) -> str:
        items = "".join(
            "<div class='manga-item'>"
            f"<h3 class='manga-heading pull-left'><a href='{self.manga_url(m)}'>{escape(m.title)}</a></h3>"
            f"<small class='pull-right'>{mmrcms_date(m.chapters[-1].published_at)}</small></div>"
            for m in mangas
        )
        return f"<h3 class='widget-title'>Latest Manga Releases</h3><div class='mangalist'>{items}</div>"

    def _detail(self, manga: FixtureManga) -> str:
        tags = ", ".join(
            f"<a href='{self.base_url}/manga-list/category/{t.lower()}'>{escape(t)}</a>" for t in manga.tags
        )
        chapters = "".join(
            "<li><h5 class='chapter-title-rtl'>"
            f"<a href='{self.chapter_url(c)}'>{escape(manga.title)} {c.number}</a> : <em>{escape(c.name)}</em></h5>"
            f"<div class='action'><div class='date-chapter-title-rtl'>{mmrcms_date(c.published_at)}</div></div></li>"
            for c in reversed(manga.chapters)
        )
        body = (
            f"<h2 class='widget-title'>{escape(manga.title)}</h2><div class='row'>"
            f"<div class='col-sm-4'><div class='boxed'><img class='img-responsive' src='{self.base_url}/uploads/manga/covers/{manga.slug}.png'></div></div>"
            "<div class='col-sm-8'><dl class='dl-horizontal'>"
            f"<dt>Status</dt><dd><span class='label label-success'>{STATUS_WORDS[manga.status]}</span></dd>"
            f"<dt>Other names</dt><dd>{escape(', '.join(manga.alt_titles))}</dd>"
            f"<dt>Author(s)</dt><dd><a href='{self.base_url}/search?author={escape(manga.author)}'>{escape(manga.author)}</a></dd>"
            f"<dt>Categories</dt><dd>{tags}</dd></dl></div></div>"
            f"<div class='row'><div class='col-lg-12'><div class='well'><h5><strong>Summary</strong></h5><p>{escape(manga.description)}</p></div></div></div>"
            f"<ul class='chapters'>{chapters}</ul>"
        )
        return self._page(manga.title, body, 0)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        images = "".join(
            f"<img class='img-responsive' src='{self.base_url}/images/loading.gif' "
            f"data-src=' {self.base_url}/uploads/manga/{manga.slug}/{chapter.number}/{i}.png ' alt='page {i}'>"
            for i in range(1, len(chapter.pages) + 1)
        )
        return self._page(f"{manga.title} {chapter.number}", f"<div id='all'>{images}</div>", 0)
