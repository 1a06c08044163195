"""What the family fixture sites share: finding a manga or chapter of the catalog and serving its images."""

from __future__ import annotations

import datetime as dt

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga, build_catalog
from testsupport.theme_sites.server import FixtureServer, Request, Response, not_found, png


def find_manga(catalog: list[FixtureManga], slug: str) -> FixtureManga | None:
    return next((m for m in catalog if m.slug == slug), None)


def find_chapter(manga: FixtureManga, number: str) -> FixtureChapter | None:
    return next((c for c in manga.chapters if str(c.number) == number), None)


def cover_or_page(catalog: list[FixtureManga], parts: list[str]) -> Response:
    """`covers/{slug}.png` or `{slug}/{chapter number}/{page index from 1}.png` (extension optional)."""
    if len(parts) == 2 and parts[0] == "covers" and (manga := find_manga(catalog, parts[1].removesuffix(".png"))):
        return png(manga.cover)
    if len(parts) == 3 and (manga := find_manga(catalog, parts[0])) and (chapter := find_chapter(manga, parts[1])):
        index = parts[2].removesuffix(".png")
        if index.isdigit() and 1 <= int(index) <= len(chapter.pages):
            return png(chapter.pages[int(index) - 1])
    return not_found()


class FamilySite:
    """A family fixture site: the shared catalog served by `route` on 127.0.0.1, `per_page` mangas a list page."""

    name = "family-site"
    per_page = 2

    def __init__(self, *, now: dt.datetime | None = None) -> None:
        self.now = now or dt.datetime.now(dt.UTC)
        self.catalog: list[FixtureManga] = build_catalog(self.now)
        self.server = FixtureServer(self.route, self.name)
        self.base_url = self.server.base_url

    def route(self, request: Request) -> Response:
        raise NotImplementedError

    def stop(self) -> None:
        self.server.stop()

    @property
    def page_count(self) -> int:
        return -(-len(self.catalog) // self.per_page)

    def list_slice(self, number: int) -> list[FixtureManga]:
        """The mangas of list page `number` (from 1), newest first."""
        return self.catalog[(number - 1) * self.per_page : number * self.per_page]
