"""A Madara-theme site: archive pages, ajax chapter lists (old and new endpoint), list-style readers.

What it follows from the theme as sites run it:
- the archive `/manga/page/N/?m_orderby=latest` (page 1 redirects to `/manga/?m_orderby=latest`);
  `directory` renames `manga` ("comic", "series", "webtoon"), `base_path` installs the whole site
  under a sub-path ("/x"), `locale` prints headings, statuses, labels and dates in another language
  with `div.page-item-detail` cards, a "HOT" badge beside the card title, `div.nav-previous`
  "Older Posts" while older pages exist, WordPress's 404 past the last page;
- "load more" archives: `POST /wp-admin/admin-ajax.php action=madara_load_more page=N-1`
  answering the cards of that page, or nothing past the end;
- detail pages whose `div#manga-chapters-holder[data-id]` is empty: the chapter list comes from
  `POST /wp-admin/admin-ajax.php action=manga_get_chapters manga={data-id}` (the old endpoint,
  answering 400 on newer theme versions, the default here) or `POST {manga_url}/ajax/chapters/`,
  fetched by the page's own script, so a browser fills the holder after load;
- `li.wp-manga-chapter` entries with `span.chapter-release-date`: "November 12, 2026" in <i>,
  or for new chapters a "new" badge link whose title and image alt hold "2 days ago";
- the title badge inside `div.post-title h1`; covers in `data-src`, `data-lazy-src`, `srcset`
  (two sizes) or plain `src` behind a `data:` placeholder;
- a home page with the latest cards; every page links the theme's stylesheet and the madara-core
  plugin's script, and (with `load_more`) archives page by a "Load more" button in
  `nav.navigation-ajax` instead of "Older Posts";
- readers `/manga/{slug}/{chapter}/`: paged by default (one image), every page with
  `?style=list`; `div.page-break img` with `data-src` padded by whitespace, as the theme prints it;
- images under `/wp-content/uploads/` that answer 403 unless the Referer is the chapter page
  (pages) or any page of the site (covers).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga, build_catalog
from testsupport.theme_sites.locales import ENGLISH, SiteLocale
from testsupport.theme_sites.server import FixtureServer, Request, Response, html, not_found, png, redirect

PER_PAGE = 2
PLACEHOLDER = (
    "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%20175%20238'%3E%3C/svg%3E"
)
_AJAX_SCRIPT = """
<script>
document.addEventListener("DOMContentLoaded", function () {
  var holder = document.querySelector("div[id^=manga-chapters-holder]");
  if (!holder) return;
  var form = {"Content-Type": "application/x-www-form-urlencoded", "X-Requested-With": "XMLHttpRequest"};
  fetch(manga.ajax_url, {method: "POST", headers: form, body: "action=manga_get_chapters&manga=" + holder.dataset.id})
    .then(function (r) {
      if (r.status !== 400) return r;
      return fetch(location.href.split("?")[0].replace(/\\/$/, "") + "/ajax/chapters/", {method: "POST", headers: form});
    })
    .then(function (r) { return r.text(); })
    .then(function (text) { holder.innerHTML = text; });
});
</script>
"""


class MadaraSite:
    def __init__(
        self,
        *,
        old_endpoint: bool = False,
        now: dt.datetime | None = None,
        catalog: list[FixtureManga] | None = None,
        lang: str | None = None,
        load_more: bool = False,
        directory: str = "manga",
        base_path: str = "",
        locale: SiteLocale = ENGLISH,
    ) -> None:
        self.old_endpoint = old_endpoint
        # Archives with a "Load more" button (nav.navigation-ajax) instead of "Older Posts" links.
        self.load_more = load_more
        self.now = now or dt.datetime.now(dt.UTC)
        self.catalog: list[FixtureManga] = catalog if catalog is not None else build_catalog(self.now)
        self.locale = locale
        self.lang = lang or locale.code
        # A quarter of the theme's sites renamed the manga directory; some install WordPress under a sub-path.
        self.directory = directory
        self.base_path = base_path.rstrip("/")
        self.server = FixtureServer(self.route, "madara-site")
        self.base_url = self.server.base_url + self.base_path

    # --- expectations for tests ---------------------------------------------------------------

    def cover_url(self, manga: FixtureManga, size: str = "193x278") -> str:
        return f"{self.base_url}/wp-content/uploads/2026/11/{manga.slug}-{size}.png"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/{self.directory}/{chapter.manga_slug}/{chapter.slug}/"

    def page_url(self, manga: FixtureManga, chapter: FixtureChapter, index: int) -> str:
        name = f"{index}.{chapter.page_extension(index)}"
        return f"{self.base_url}/wp-content/uploads/WP-manga/data/manga_{manga.post_id}/{chapter.slug}/{name}"

    def stop(self) -> None:
        self.server.stop()

    # --- routing ------------------------------------------------------------------------------

    def label(self, chapter: FixtureChapter) -> str:
        """What the site prints for a chapter, in its language."""
        return chapter.label or self.locale.label(chapter.number)

    def route(self, request: Request) -> Response:
        if self.base_path:  # nothing answers outside the install's sub-path but the host's own 404
            if not (request.path + "/").startswith(self.base_path + "/"):
                return not_found()
            request = dataclasses.replace(request, path=request.path[len(self.base_path) :] or "/")
        parts = [p for p in request.path.split("/") if p]
        directory = self.directory
        if request.method == "POST" and request.path == "/wp-admin/admin-ajax.php":
            return self._admin_ajax(request)
        if request.method == "POST" and len(parts) == 4 and parts[0] == directory and parts[2:] == ["ajax", "chapters"]:
            manga = self._manga(parts[1])
            return html(self._chapter_list(manga)) if manga else not_found()
        if request.method != "GET":
            return html("", 405)
        if not parts:
            return html(self._home())
        if request.path.startswith("/wp-content/themes/madara/") or request.path.startswith(
            "/wp-content/plugins/madara-core/"
        ):
            return Response(200, b"", "text/css" if request.path.endswith(".css") else "text/javascript")
        if parts == [directory]:
            return html(self._archive(1))
        if len(parts) == 3 and parts[0] == directory and parts[1] == "page" and parts[2].isdigit():
            number = int(parts[2])
            if number == 1:
                return redirect(f"{self.base_url}/{directory}/?m_orderby=latest")
            return html(self._archive(number)) if number <= self.page_count else not_found()
        if len(parts) == 2 and parts[0] == directory and (manga := self._manga(parts[1])):
            return html(self._detail(manga))
        if len(parts) == 3 and parts[0] == directory and (manga := self._manga(parts[1])):
            chapter = next((c for c in manga.chapters if c.slug == parts[2]), None)
            if chapter:
                return html(self._reader(manga, chapter, request.query.get("style", "paged")))
        if request.path.startswith("/wp-content/uploads/"):
            return self._image(request, parts)
        return not_found()

    @property
    def page_count(self) -> int:
        return -(-len(self.catalog) // PER_PAGE)

    def _manga(self, slug: str) -> FixtureManga | None:
        return next((m for m in self.catalog if m.slug == slug), None)

    def _admin_ajax(self, request: Request) -> Response:
        action = request.form.get("action")
        if action == "manga_get_chapters":
            if not self.old_endpoint:
                return html("0", 400)
            manga = next((m for m in self.catalog if str(m.post_id) == request.form.get("manga")), None)
            return html(self._chapter_list(manga)) if manga else html("0", 400)
        if action == "madara_load_more":
            index = int(request.form.get("page", "0"))
            return html(self._cards(index + 1))
        return html("0", 400)

    def _image(self, request: Request, parts: list[str]) -> Response:
        name = parts[-1]
        for manga in self.catalog:
            if name == f"{manga.slug}-193x278.png":
                return png(manga.cover) if request.referer.startswith(self.base_url) else html("Forbidden", 403)
            if name == f"{manga.slug}-110x150.png":
                return png(manga.cover_thumbnail)
            if parts[-3] == f"manga_{manga.post_id}":
                chapter = next((c for c in manga.chapters if c.slug == parts[-2]), None)
                stem, _, ext = name.partition(".")
                if chapter is None or not stem.isdigit() or not 1 <= int(stem) <= len(chapter.pages):
                    break
                if not request.referer.startswith(self.chapter_url(chapter)):
                    return html("<h1>403 Forbidden</h1>", 403)
                index = int(stem)
                if ext != chapter.page_extension(index):
                    break
                return Response(200, chapter.pages[index - 1], chapter.page_type(index))
        return not_found()

    # --- markup -------------------------------------------------------------------------------

    def _page(self, title: str, body: str, *, script: str = "") -> str:
        return (
            f"<!DOCTYPE html><html lang='{self.lang}'><head><meta charset='UTF-8'>"
            f"<title>{escape(title)} - Madara Fixture</title>"
            f"<link rel='stylesheet' id='madara-css-css' href='{self.base_url}/wp-content/themes/madara/style.css'>"
            f"<script src='{self.base_url}/wp-content/plugins/madara-core/assets/js/script.js'></script>"
            f'<script id=\'wp-manga-js-extra\'>var manga = {{"ajax_url":"{self.base_url}/wp-admin/admin-ajax.php",'
            '"enable_manga_view":"1"};</script>'
            f"{script}</head><body class='wp-theme-madara'><div class='wrap'><div class='body-wrap'>"
            f"<div class='site-content'>{body}</div></div></div></body></html>"
        )

    def _cover_img(self, manga: FixtureManga) -> str:
        url, small = self.cover_url(manga), self.cover_url(manga, "110x150")
        variant = manga.post_id % 4
        if variant == 0:
            return f"<img class='img-responsive lazyload' src='{PLACEHOLDER}' data-src='{url}' alt='{escape(manga.title)}'>"
        if variant == 1:
            return f"<img class='img-responsive' src='{PLACEHOLDER}' data-lazy-src='{url}' alt='{escape(manga.title)}'>"
        if variant == 2:
            return f"<img class='img-responsive' srcset='{small} 110w, {url} 193w' sizes='(max-width: 193px) 100vw'>"
        return f"<img class='img-responsive' src='{url}' alt='{escape(manga.title)}'>"

    def _cards(self, number: int) -> str:
        start = (number - 1) * PER_PAGE
        cards = []
        for manga in self.catalog[start : start + PER_PAGE]:
            url = f"{self.base_url}/{self.directory}/{manga.slug}/"
            latest = manga.chapters[-1]
            cards.append(
                "<div class='col-6 col-md-3 badge-pos-1'><div class='page-item-detail manga'>"
                f"<div id='manga-item-{manga.post_id}' class='item-thumb hover-details c-image-hover'"
                f" data-post-id='{manga.post_id}'><a href='{url}' title='{escape(manga.title)}'>"
                f"<img width='175' height='238' src='{PLACEHOLDER}' data-src='{self.cover_url(manga)}'"
                " class='img-responsive effect-fade lazyload'></a></div>"
                "<div class='item-summary'><div class='post-title font-title'><h3 class='h5'>"
                f"<span class='manga-title-badges hot'>HOT</span><a href='{url}'>{escape(manga.title)}</a></h3></div>"
                "<div class='list-chapter'><div class='chapter-item'><span class='chapter font-meta'>"
                f"<a href='{self.chapter_url(latest)}' class='btn-link'> {escape(self.label(latest))} </a></span></div></div>"
                "</div></div></div>"
            )
        return "".join(cards)

    def _home(self) -> str:
        body = (
            "<div class='c-blog__heading style-2 font-heading'><h4>Latest update</h4></div>"
            f"<div class='page-listing-item'><div class='row row-eq-height'>{self._cards(1)}</div></div>"
            f"{self._paging(1)}"
        )
        return self._page("Home", body)

    def _paging(self, number: int) -> str:
        if number >= self.page_count:
            return ""
        if self.load_more:
            return (
                "<nav class='navigation-ajax'><div id='navigation-ajax' class='btn btn-default load-ajax'"
                " data-page='1'>Load more</div></nav>"
            )
        return (
            "<div class='nav-links'><div class='nav-previous float-left'>"
            f"<a href='{self.base_url}/{self.directory}/page/{number + 1}/?m_orderby=latest'>Older Posts</a></div></div>"
        )

    def _archive(self, number: int) -> str:
        older = self._paging(number)
        body = (
            "<div class='c-page-content'><div class='tab-content-wrap'><div class='c-tabs-item'>"
            f"<div class='page-listing-item'><div class='row row-eq-height'>{self._cards(number)}</div></div>"
            f"</div></div>{older}</div>"
        )
        return self._page("Manga", body)

    def status_word(self, manga: FixtureManga) -> str:
        return manga.status_word if self.locale is ENGLISH else self.locale.statuses[manga.status]

    def _detail(self, manga: FixtureManga) -> str:
        heading = self.locale.headings
        tags = ", ".join(f"<a href='{self.base_url}/manga-genre/{t.lower()}/' rel='tag'>{t}</a>" for t in manga.tags)
        body = (
            "<div class='profile-manga summary-layout-1'><div class='container'><div class='row'><div class='col-12'>"
            "<div class='post-title'><h1>"
            f"<span class='manga-title-badges hot'>HOT</span> {escape(manga.title)} </h1></div>"
            "<div class='tab-summary'>"
            f"<div class='summary_image'><a href='{self.base_url}/{self.directory}/{manga.slug}/'>{self._cover_img(manga)}</a></div>"
            "<div class='summary_content_wrap'><div class='summary_content'><div class='post-content'>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Rating</h5></div>"
            "<div class='summary-content'>Average 4.5 / 5 out of 12</div></div>"
            f"<div class='post-content_item'><div class='summary-heading'><h5>{heading['alt']}</h5></div>"
            f"<div class='summary-content'> {escape(', '.join(manga.alt_titles))} </div></div>"
            f"<div class='post-content_item'><div class='summary-heading'><h5>{heading['author']}</h5></div>"
            f"<div class='summary-content'><div class='author-content'><a href='{self.base_url}/manga-author/x/'"
            f" rel='tag'>{escape(manga.author)}</a></div></div></div>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Genre(s)</h5></div>"
            f"<div class='summary-content'><div class='genres-content'>{tags}</div></div></div>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Type</h5></div>"
            "<div class='summary-content'>Manhwa</div></div>"
            "</div><div class='post-status'>"
            "<div class='post-content_item'><div class='summary-heading'><h5>Release</h5></div>"
            "<div class='summary-content'><a href='#'>2026</a></div></div>"
            f"<div class='post-content_item'><div class='summary-heading'><h5>{heading['status']}</h5></div>"
            f"<div class='summary-content'> {self.status_word(manga)} </div></div>"
            "</div></div></div></div></div></div></div></div>"
            "<div class='c-page-content style-1'><div class='content-area'><div class='container'><div class='row'>"
            "<div class='main-col col-md-8 col-sm-8'><div class='main-col-inner'>"
            "<div class='c-page'><div class='c-page__content'><div class='description-summary'>"
            f"<div class='summary__content show-more'><p>{escape(manga.description)}</p></div></div></div></div>"
            "<div class='c-page'><div class='c-page__content'><div class='page-content-listing single-page'>"
            f"<div id='manga-chapters-holder' data-id='{manga.post_id}'>"
            "<div class='c-blog__heading style-2 font-heading'><h2 class='h4'>LATEST MANGA RELEASES</h2></div>"
            "</div></div></div></div></div></div></div></div></div></div>"
        )
        return self._page(manga.title, body, script=_AJAX_SCRIPT)

    def _chapter_list(self, manga: FixtureManga) -> str:
        items = []
        for chapter in reversed(manga.chapters):
            url = self.chapter_url(chapter)
            if chapter.relative:
                relative = self.locale.relative[chapter.relative]
                date = (
                    f"<a href='{url}' title='{relative}' class='c-new-tag'>"
                    f"<img width='24' height='24' src='{self.base_url}/wp-content/themes/madara/images/new.png'"
                    f" alt='{relative}'></a>"
                )
            else:
                date = f"<i>{self.locale.calendar(chapter.published_at)}</i>"
            items.append(
                f"<li class='wp-manga-chapter    '><a href='{url}'> {escape(self.label(chapter))} </a>"
                f"<span class='chapter-release-date'>{date}</span></li>"
            )
        return (
            "<div class='page-content-listing single-page'><div class='listing-chapters_wrap cols-1 show-more'>"
            f"<ul class='main version-chap no-volumn active'>{''.join(items)}</ul></div></div>"
        )

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter, style: str) -> str:
        count = len(chapter.pages) if style == "list" else 1
        breaks = "".join(
            f"<div class='page-break no-gaps'><img id='image-{i - 1}' data-src='\n\t\t\t{self.page_url(manga, chapter, i)} '"
            " class='wp-manga-chapter-img img-responsive lazyload effect-fade'></div>"
            for i in range(1, count + 1)
        )
        body = (
            "<div class='c-page-content style-2'><div class='content-area'><div class='container'>"
            f"<div class='reading-content'><input type='hidden' id='wp-manga-current-chap' data-id='{manga.post_id}'>"
            f"{breaks}</div></div></div></div>"
        )
        return self._page(f"{manga.title} - {self.label(chapter)}", body)
