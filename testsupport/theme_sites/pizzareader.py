"""A PizzaReader site: a Vue front-end over a public JSON API under /api.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/pizzareader/.../PizzaReader.kt` and `PizzaReaderDto.kt`; the
per-site extensions `src/it/hastateam`, `src/it/phoenixscans`,
`src/fr/fmteam` only set name, base URL and language):
- the home page is the single-page app's shell (`<div id="app">`, `/js/app.js`), `<html lang="it">`:
  nothing to read there, the site is found by probing `/api/comics`;
- `/api/comics`: `{"comics": [...]}`, the whole catalogue in one answer (no paging) ordered by title,
  each comic with `title`, `thumbnail`, `url` ("/comics/{slug}") and `last_chapter` (whose
  `published_on` the family's latest list sorts by);
- `/api/comics/{slug}`: `{"comic": {...}}` with `author`, `artist`, `description`, `genres[].name`,
  `status` in the site's language ("In corso", "Completata", "In pausa", "Cancellato"),
  `alt_titles`, and `chapters[]` (`chapter`, `full_title`, `published_on` ISO with microseconds,
  `url` "/read/{slug}/it/ch/{n}");
- `/api/read/{slug}/it/ch/{n}`: `{"comic": ..., "chapter": {"pages": [absolute image URLs]}}`;
- images under `/storage/` (no Referer check).
"""

from __future__ import annotations

import datetime as dt
import json

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite
from testsupport.theme_sites.server import Request, Response, html, not_found, png

STATUS_WORDS = {"ongoing": "In corso", "completed": "Completata", "hiatus": "In pausa", "cancelled": "Cancellato"}


def iso(moment: dt.datetime) -> str:
    """How the API prints a moment: Laravel's microsecond ISO form in UTC."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def as_json(value: object) -> Response:
    return Response(200, json.dumps(value).encode(), "application/json")


class PizzaReaderSite(FamilySite):
    name = "pizzareader-site"

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/comics/{manga.slug}"

    def chapter_url(self, chapter: FixtureChapter) -> str:
        """Where a crawl reads the chapter's pages (and what its key is read off)."""
        return f"{self.base_url}/api/read/{chapter.manga_slug}/it/ch/{chapter.number}"

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return html(
                "<!DOCTYPE html><html lang='it'><head><meta charset='utf-8'><title>PizzaReader Fixture</title>"
                "<link href='/css/app.css' rel='stylesheet'></head><body><div id='app'></div>"
                "<script src='/js/app.js'></script></body></html>"
            )
        if parts[0] == "api":
            return self._api(parts[1:])
        if parts[0] == "storage":
            return self._image(parts[1:])
        return not_found()

    def _manga(self, slug: str) -> FixtureManga | None:
        return next((m for m in self.catalog if m.slug == slug), None)

    def _chapter_json(self, manga: FixtureManga, chapter: FixtureChapter) -> dict[str, object]:
        return {
            "chapter": chapter.number,
            "subchapter": None,
            "volume": None,
            "full_title": f"Ch.{chapter.number}",
            "title": None,
            "published_on": iso(chapter.published_at),
            "teams": [{"name": "Fixture Team"}],
            "url": f"/read/{manga.slug}/it/ch/{chapter.number}",
        }

    def _comic_json(self, manga: FixtureManga, *, chapters: bool) -> dict[str, object]:
        comic: dict[str, object] = {
            "title": manga.title,
            "alt_titles": list(manga.alt_titles),
            "author": manga.author,
            "artist": manga.author,
            "description": manga.description,
            "genres": [{"name": tag, "slug": tag.lower()} for tag in manga.tags],
            "status": STATUS_WORDS[manga.status],
            "thumbnail": f"{self.base_url}/storage/comics/{manga.slug}/cover.png",
            "url": f"/comics/{manga.slug}",
            "last_chapter": self._chapter_json(manga, manga.chapters[-1]),
        }
        if chapters:
            comic["chapters"] = [self._chapter_json(manga, c) for c in reversed(manga.chapters)]
        return comic

    def _api(self, parts: list[str]) -> Response:
        if parts == ["comics"]:
            # By title, as the family's API lists them: a crawl orders them by their last chapter itself.
            comics = sorted(self.catalog, key=lambda m: m.title)
            return as_json({"comics": [self._comic_json(m, chapters=False) for m in comics]})
        if len(parts) == 2 and parts[0] == "comics" and (manga := self._manga(parts[1])):
            return as_json({"comic": self._comic_json(manga, chapters=True)})
        if len(parts) == 5 and parts[0] == "read" and parts[2:4] == ["it", "ch"] and (manga := self._manga(parts[1])):
            chapter = next((c for c in manga.chapters if str(c.number) == parts[4]), None)
            if chapter is None:
                return not_found()
            pages = [
                f"{self.base_url}/storage/chapters/{manga.slug}/{chapter.number}/{i:02d}.png"
                for i in range(1, len(chapter.pages) + 1)
            ]
            return as_json({"comic": self._comic_json(manga, chapters=False), "chapter": {"pages": pages}})
        return Response(404, b'{"error":"not found"}', "application/json")

    def _image(self, parts: list[str]) -> Response:
        if len(parts) == 3 and parts[0] == "comics" and (manga := self._manga(parts[1])) and parts[2] == "cover.png":
            return png(manga.cover)
        if len(parts) == 4 and parts[0] == "chapters" and (manga := self._manga(parts[1])):
            chapter = next((c for c in manga.chapters if str(c.number) == parts[2]), None)
            index = parts[3].removesuffix(".png")
            if chapter and index.isdigit() and 1 <= int(index) <= len(chapter.pages):
                return png(chapter.pages[int(index) - 1])
        return not_found()
