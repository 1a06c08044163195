"""A Keyoapp site: Tailwind pages, one-page latest list, paid chapters, page images on a CDN named in a script.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/keyoapp/.../Keyoapp.kt`; per-site extensions `src/en/edscanlation`,
`src/en/kewnscans`, `src/en/amuyscans` only set name, URL and language):
- the home page and `/latest/`: `div.grid > div.group.border` cards, each an `a[href][title]` to
  `/series/{slug}/` and a `div` whose `style` holds `background-image:url(...)` (the cover); no paging;
- `/series/{slug}/`: `div.grid > h1` title, `div[class*=photoURL]` cover as a background image, "Synopsis",
  "Status", "Author" rows (`div:has(span:containsOwn(Status)) ~ div`), genre links under the title, and
  `#chapters > a` rows (`.text-sm` "Chapter N", `.text-xs` "Nov 2, 2026" or "2 days ago"); a paid chapter
  carries `img[src*=Coin.svg]` and an upcoming one a `.text-sm span` "Upcoming": a crawl skips both;
- `/chapter/{slug}-chapter-N/`: `#pages > img[uid]` and an inline script setting
  ``realUrl = `{cdn}/uploads/${uid}` ``: each page is `{cdn}/uploads/{uid}`, on the CDN (another port here);
- the CDN answers 403 without the site as Referer.
"""

from __future__ import annotations

from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite, cover_or_page, find_chapter, find_manga
from testsupport.theme_sites.server import FixtureServer, Request, Response, html, not_found

STATUS_WORDS = {"ongoing": "Ongoing", "completed": "Completed", "hiatus": "Paused", "cancelled": "Dropped"}
RELATIVE = {"2 days ago": "2 days ago", "an hour ago": "1 hour ago", "yesterday": "1 day ago"}


class KeyoappSite(FamilySite):
    name = "keyoapp-site"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cdn = FixtureServer(self.cdn_route, "keyoapp-cdn")

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/series/{manga.slug}/"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        return f"{self.base_url}/chapter/{chapter.manga_slug}-{chapter.slug}/"

    def uid(self, chapter: FixtureChapter, index: int) -> str:
        return f"{chapter.manga_slug}/{chapter.number}/{index}.png"

    def stop(self) -> None:
        super().stop()
        self.cdn.stop()

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        parts = [p for p in request.path.split("/") if p]
        if not parts or parts == ["latest"]:
            return html(self._page("Latest", self._cards()))
        if parts[0] == "series" and len(parts) == 2 and (manga := find_manga(self.catalog, parts[1])):
            return html(self._detail(manga))
        if parts[0] == "chapter" and len(parts) == 2:
            for manga in self.catalog:
                if parts[1].startswith(manga.slug + "-chapter-"):
                    chapter = find_chapter(manga, parts[1].removeprefix(manga.slug + "-chapter-"))
                    if chapter:
                        return html(self._reader(chapter))
        return not_found()

    def cdn_route(self, request: Request) -> Response:
        parts = [p for p in request.path.split("/") if p]
        if request.method != "GET" or parts[:1] != ["uploads"]:
            return not_found()
        if not request.referer.startswith(self.base_url + "/"):
            return html("<h1>403 Forbidden</h1>", 403)
        return cover_or_page(self.catalog, parts[1:])

    def _page(self, title: str, body: str) -> str:
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{escape(title)} - Keyoapp Fixture</title></head><body class='bg-primary'>"
            f"<nav><a href='{self.base_url}/latest/'>Latest</a><a href='{self.base_url}/series/'>Series</a></nav>"
            f"<main>{body}</main></body></html>"
        )

    def _cover(self, manga: FixtureManga) -> str:
        return f"{self.cdn.base_url}/uploads/covers/{manga.slug}.png"

    def _cards(self) -> str:
        cards = "".join(
            "<div class='group border border-border rounded-lg'>"
            f"<a href='{self.manga_url(m)}' title='{escape(m.title)}'>"
            f"<div class='bg-cover' style=\"background-image:url('{self._cover(m)}')\"></div></a>"
            f"<a href='{self.manga_url(m)}' title='{escape(m.title)}' class='text-sm'>{escape(m.title)}</a></div>"
            for m in self.catalog
        )
        return f"<div class='flex flex-col'><div class='grid grid-cols-2 gap-3'>{cards}</div></div>"

    def _chapter_row(self, chapter: FixtureChapter, *, paid: bool = False, upcoming: bool = False) -> str:
        date = RELATIVE[chapter.relative] if chapter.relative else chapter.published_at.strftime("%b %-d, %Y")
        coin = "<img src='/assets/Coin.svg' alt='Coin'>" if paid else ""
        label = f"Chapter {chapter.number}" + (" <span>Upcoming</span>" if upcoming else "")
        return (
            f"<a href='{self.chapter_url(chapter)}' class='flex'><div class='text-sm'>{label}</div>"
            f"<div class='text-xs'>{date}</div>{coin}</a>"
        )

    def _detail(self, manga: FixtureManga) -> str:
        last = manga.chapters[-1]
        paid = FixtureChapter(manga.slug, manga.title, last.number + 1, self.now, None)
        upcoming = FixtureChapter(manga.slug, manga.title, last.number + 2, self.now, None)
        rows = self._chapter_row(upcoming, upcoming=True) + self._chapter_row(paid, paid=True)
        rows += "".join(self._chapter_row(c) for c in reversed(manga.chapters))
        genres = "".join(f"<a href='{self.base_url}/series/?genre={t}'>{escape(t)}</a>" for t in manga.tags)
        body = (
            f"<div class='grid'><h1>{escape(manga.title)}</h1><div>{genres}</div></div>"
            f"<div class='rounded photoURL' style=\"background-image:url('{self._cover(manga)}')\"></div>"
            f"<div><div>Synopsis</div><div><p>{escape(manga.description)}</p></div></div>"
            f"<div><div><span>Alternative Titles</span></div><div>{escape(', '.join(manga.alt_titles))}</div></div>"
            f"<div><div><span>Status</span></div><div>{STATUS_WORDS[manga.status]}</div></div>"
            f"<div><div><span>Author</span></div><div>{escape(manga.author)}</div></div>"
            f"<div id='chapters'>{rows}</div>"
        )
        return self._page(manga.title, body)

    def _reader(self, chapter: FixtureChapter) -> str:
        images = "".join(
            f"<img uid='{self.uid(chapter, i)}' loading='lazy' class='w-full'>"
            for i in range(1, len(chapter.pages) + 1)
        )
        script = (
            "<script>document.querySelectorAll('#pages > img').forEach(img => {"
            f" let uid = img.getAttribute('uid'); let realUrl = `{self.cdn.base_url}/uploads/${{uid}}`;"
            " img.src = realUrl; });</script>"
        )
        return self._page(chapter.title, f"<div id='pages'>{images}</div>{script}")
