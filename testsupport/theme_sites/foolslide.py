"""A FoOlSlide reader: series and chapter lists as div.group/div.element, pages in an inline script, an adult gate.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/foolslide/.../FoolSlide.kt`; per-site extensions
`src/en/silentsky`, `src/it/rama`, `src/es/menudofansub` set a `/slide`
sub-path or another date format):
- `/latest/{page}/`: `div.group` per series (`div.title a[title]`) with its newest `div.element` chapters,
  `div.next` while more pages follow;
- every reader page first answers an adult warning (a form posting `adult=true`) until the session has
  said yes: the gate is passed by that POST, and the cookie it sets lets every later GET through;
- `/series/{slug}/`: `h1.title`, `div.thumbnail img`, `div.info` with `<b>Author</b>: ...<br>` and
  `<b>Synopsis</b>: ...<br>` rows (no status, genres or alternative titles: the family prints none),
  `div.list div.element` rows (`div.title a[title]` "Chapter N", `div.meta_r` "by <a>Team</a>, 2026.11.02");
- `/read/{slug}/en/0/{n}/page/1`: `var pages = [{"id":..,"url":"...","width":..}];` in an inline script;
- images under `/content/comics/` (no Referer check).
"""

from __future__ import annotations

import json
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite, cover_or_page, find_chapter, find_manga
from testsupport.theme_sites.server import Request, Response, html, not_found

ADULT_COOKIE = "foolslide_adult=1"


class FoOlSlideSite(FamilySite):
    name = "foolslide-site"

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/series/{manga.slug}/"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/read/{chapter.manga_slug}/en/0/{chapter.number}/page/1"

    def route(self, request: Request) -> Response:
        parts = [p for p in request.path.split("/") if p]
        if parts[:2] == ["content", "comics"]:
            return cover_or_page(self.catalog, parts[2:]) if request.method == "GET" else not_found()
        if request.method == "POST" and request.form.get("adult") == "true":
            page = self._page_for(parts, request)
            return Response(page.status, page.body, page.content_type, {"Set-Cookie": f"{ADULT_COOKIE}; Path=/"})
        if request.method != "GET":
            return not_found()
        if parts and ADULT_COOKIE not in request.headers.get("cookie", ""):
            return html(
                self._wrap(
                    "Warning",
                    "<div class='alert'>This series contains mature contents.<form method='post'>"
                    "<input type='hidden' name='adult' value='true'><input type='submit' value='Yes'></form></div>",
                )
            )
        return self._page_for(parts, request)

    def _page_for(self, parts: list[str], request: Request) -> Response:
        if not parts:
            return html(self._wrap("FoOlSlide Fixture", self._groups(self.list_slice(1), 1)))
        if parts[0] == "latest" and len(parts) == 2 and parts[1].isdigit() and 1 <= int(parts[1]) <= self.page_count:
            number = int(parts[1])
            return html(self._wrap("Latest", self._groups(self.list_slice(number), number)))
        if parts[0] == "series" and len(parts) == 2 and (manga := find_manga(self.catalog, parts[1])):
            return html(self._series(manga))
        if parts[0] == "read" and len(parts) >= 5 and (manga := find_manga(self.catalog, parts[1])):
            chapter = find_chapter(manga, parts[4])
            return html(self._reader(manga, chapter)) if chapter else not_found()
        return not_found()

    def _wrap(self, title: str, body: str) -> str:
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{escape(title)} :: FoOlSlide Fixture</title>"
            f"<link rel='stylesheet' href='{self.base_url}/content/themes/default/style.css'></head>"
            f"<body><div id='wrapper'><div id='content'>{body}</div></div>"
            "<div id='footer'>Powered by FoOlSlide</div></body></html>"
        )

    def _element(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        return (
            "<div class='element'><div class='title'>"
            f"<a href='{self.chapter_url(chapter)}' title='{escape(chapter.title)}'>{escape(chapter.title)}</a></div>"
            f"<div class='meta_r'>by <a href='{self.base_url}/team/fixture/' title='Fixture'>Fixture</a>, "
            f"{chapter.published_at.strftime('%Y.%m.%d')}</div></div>"
        )

    def _groups(self, mangas: list[FixtureManga], number: int) -> str:
        groups = "".join(
            f"<div class='group'><div class='title'><a href='{self.manga_url(m)}' title='{escape(m.title)}'>{escape(m.title)}</a></div>"
            + "".join(self._element(m, c) for c in reversed(m.chapters[-2:]))
            + "</div>"
            for m in mangas
        )
        more = (
            f"<div class='next'><a href='{self.base_url}/latest/{number + 1}/'>Next &raquo;</a></div>"
            if number < self.page_count
            else ""
        )
        return f"<div class='panel'><h2>Latest releases</h2><div class='list series'>{groups}</div>{more}</div>"

    def _series(self, manga: FixtureManga) -> str:
        elements = "".join(self._element(manga, c) for c in reversed(manga.chapters))
        body = (
            "<div class='panel'><div class='comic info'>"
            f"<div class='thumbnail'><img src='{self.base_url}/content/comics/covers/{manga.slug}.png'></div>"
            f"<div class='large comic'><h1 class='title'>{escape(manga.title)}</h1>"
            f"<div class='info'><b>Author</b>: {escape(manga.author)}<br>\n<b>Artist</b>: {escape(manga.author)}<br>\n"
            f"<b>Synopsis</b>: {escape(manga.description)}<br>\n</div></div></div>"
            f"<div class='list'><div class='group'><div class='title'>Volume 0</div>{elements}</div></div></div>"
        )
        return self._wrap(manga.title, body)

    def _reader(self, manga: FixtureManga, chapter: FixtureChapter) -> str:
        pages = [
            {"id": str(i), "filename": f"{i}.png", "width": "800", "height": "1200",
             "url": f"{self.base_url}/content/comics/{manga.slug}/{chapter.number}/{i}.png"}
            for i in range(1, len(chapter.pages) + 1)
        ]  # fmt: skip
        script = f"var title = '{escape(manga.title)}';\nvar pages = {json.dumps(pages)};\nvar next_chapter = '';"
        return self._wrap(
            f"{manga.title} :: {chapter.title}",
            f"<div id='page'><img class='open' src=''></div><script>{script}</script>",
        )
