"""A WPComics site (NetTruyen style, Vietnamese): not WordPress despite the name; dates in the site's zone.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/wpcomics/.../WPComics.kt`; per-site extensions `src/vi/nettruyen`,
`src/vi/toptruyen`, `src/en/xoxocomics` override paths and the date format,
and set the GMT offset the site prints its times in):
- `<html lang="vi">`; the home page lists the latest updates as `div.items div.item` (`h3 a` title link,
  `div.image a img[data-original]`), paged by `/?page=N` with `a.next-page` while more follow; the search
  form posts to `/tim-truyen`;
- `/truyen-tranh/{slug}`: `article#item-detail` with `h1.title-detail`, `h2.other-name`, `li.author`,
  `li.status` ("Đang tiến hành", "Hoàn thành", ...) and `li.kind` rows (`p.col-xs-8`), `div.col-image img`,
  `div.detail-content p`, and `div.list-chapter li.row` rows (`div.chapter a` "Chương N",
  `div.col-xs-4` "HH:mm - dd/MM/yyyy" at GMT+7, or relative "2 ngày trước" for new chapters);
- `/truyen-tranh/{slug}/chuong-{n}`: `div.page-chapter > img` with `data-original` (lazy loading);
- images under `/images/` answer 403 without the site as Referer.
"""

from __future__ import annotations

import datetime as dt
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite, cover_or_page, find_chapter, find_manga
from testsupport.theme_sites.server import Request, Response, html, not_found

SITE_ZONE = dt.timezone(dt.timedelta(hours=7))
STATUS_WORDS = {"ongoing": "Đang tiến hành", "completed": "Hoàn thành", "hiatus": "Tạm ngưng", "cancelled": "Đã hủy"}
RELATIVE = {"2 days ago": "2 ngày trước", "an hour ago": "1 giờ trước", "yesterday": "1 ngày trước"}


def site_time(moment: dt.datetime) -> str:
    """ "07:00 - 02/11/2026": the site's own clock (GMT+7), no zone printed."""
    return moment.astimezone(SITE_ZONE).strftime("%H:%M - %d/%m/%Y")


class WPComicsSite(FamilySite):
    name = "wpcomics-site"

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/truyen-tranh/{manga.slug}"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/truyen-tranh/{chapter.manga_slug}/chuong-{chapter.number}"

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            page = request.query.get("page", "1")
            if not page.isdigit() or not 1 <= int(page) <= self.page_count:
                return not_found()
            return html(self._home(int(page)))
        if parts[0] == "truyen-tranh" and len(parts) in (2, 3) and (manga := find_manga(self.catalog, parts[1])):
            if len(parts) == 2:
                return html(self._detail(manga))
            chapter = find_chapter(manga, parts[2].removeprefix("chuong-"))
            return html(self._reader(manga, chapter)) if chapter and parts[2].startswith("chuong-") else not_found()
        if parts[0] == "images":
            if not request.referer.startswith(self.base_url + "/"):
                return html("<h1>403 Forbidden</h1>", 403)
            return cover_or_page(self.catalog, parts[1:])
        return not_found()

    def _page(self, title: str, body: str) -> str:
        return (
            "<!DOCTYPE html><html lang='vi'><head><meta charset='utf-8'>"
            f"<title>{escape(title)} - WPComics Fixture</title></head><body>"
            f"<form action='{self.base_url}/tim-truyen' method='get' class='search-form'><input name='keyword'></form>"
            f"<div id='ctl00_divCenter' class='center-side'>{body}</div></body></html>"
        )

    def _home(self, number: int) -> str:
        items = "".join(
            "<div class='item'><figure class='clearfix'>"
            f"<div class='image'><a href='{self.manga_url(m)}'><img data-original='{self.base_url}/images/covers/{m.slug}.png' src='data:image/gif;base64,R0lGOD'></a></div>"
            f"<figcaption><h3><a class='jtip' href='{self.manga_url(m)}'>{escape(m.title)}</a></h3></figcaption></figure></div>"
            for m in self.list_slice(number)
        )
        pager = "<ul class='pagination'>"
        if number < self.page_count:
            pager += f"<li><a class='next-page' href='{self.base_url}/?page={number + 1}'>&gt;</a></li>"
        pager += "</ul>"
        return self._page("Truyện mới cập nhật", f"<div class='items'><div class='row'>{items}</div></div>{pager}")

    def _date(self, chapter: FixtureChapter) -> str:
        return RELATIVE[chapter.relative] if chapter.relative else site_time(chapter.published_at)

    def _detail(self, manga: FixtureManga) -> str:
        kinds = " - ".join(f"<a href='{self.base_url}/tim-truyen/{t.lower()}'>{escape(t)}</a>" for t in manga.tags)
        rows = "".join(
            f"<li class='row'><div class='col-xs-5 chapter'><a href='{self.chapter_url(c)}'>Chương {c.number}</a></div>"
            f"<div class='col-xs-4 text-center no-wrap small'>{self._date(c)}</div>"
            "<div class='col-xs-3 text-center small'>1.024</div></li>"
            for c in reversed(manga.chapters)
        )
        body = (
            "<article id='item-detail'>"
            f"<h1 class='title-detail'>{escape(manga.title)}</h1>"
            "<div class='detail-info'><div class='row'>"
            f"<div class='col-xs-4 col-image'><img src='{self.base_url}/images/covers/{manga.slug}.png' alt='{escape(manga.title)}'></div>"
            "<div class='col-xs-8 col-info'>"
            f"<h2 class='other-name col-xs-12'>{escape('; '.join(manga.alt_titles))}</h2><ul class='list-info'>"
            f"<li class='author row'><p class='name col-xs-4'>Tác giả</p><p class='col-xs-8'>{escape(manga.author)}</p></li>"
            f"<li class='status row'><p class='name col-xs-4'>Tình trạng</p><p class='col-xs-8'>{STATUS_WORDS[manga.status]}</p></li>"
            f"<li class='kind row'><p class='name col-xs-4'>Thể loại</p><p class='col-xs-8'>{kinds}</p></li>"
            "</ul></div></div></div>"
            f"<div class='detail-content'><h3 class='list-title'>Nội dung</h3><p>{escape(manga.description)}</p></div>"
            "<div class='list-chapter' id='nt_listchapter'><nav><ul>"
            "<li class='row heading'><div class='col-xs-5 no-wrap'>Số chương</div><div class='col-xs-4 no-wrap text-center'>Cập nhật</div></li>"
            f"{rows}</ul></nav></div></article>"
        )
        return self._page(manga.title, body)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        images = "".join(
            f"<div class='page-chapter' id='page_{i}'><img data-original='{self.base_url}/images/{manga.slug}/{chapter.number}/{i}.png' "
            f"src='{self.base_url}/images/loading.gif' alt='{escape(manga.title)} Chương {chapter.number} - Trang {i}'></div>"
            for i in range(1, len(chapter.pages) + 1)
        )
        return self._page(
            f"{manga.title} Chương {chapter.number}", f"<div class='reading-detail box_doc'>{images}</div>"
        )
