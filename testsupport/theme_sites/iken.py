"""An Iken site: a Next.js front-end whose catalogue, chapter lists and pages come from a JSON API.

What it follows from the family (keiyoushi/extensions-source
`lib-multisrc/iken/.../Iken.kt` and `Dto.kt`; per-site extensions
`src/en/infernalvoidscans`, `src/en/hivetoon`, `src/en/vortexscans` set
name, base URL and, on some sites, an `apiUrl` on the `api.<host>` sibling):
- the home page is the Next.js shell (`/_next/static/...`, `self.__next_f.push` chunks) and nothing a
  crawler reads; the site is found by probing `/api/query?perPage=1` (here on the site's own origin,
  `apiUrl = baseUrl`, which Iken.kt uses unless a site overrides it);
- `/api/query?page=&perPage=&searchTerm=&orderBy=lastChapterAddedAt`: `{"posts": [...], "totalCount": N}`,
  posts newest first with `id`, `slug`, `postTitle`, `isNovel`, `featuredImage`;
- `/api/post?postSlug=` (or `postId=`): `{"post": {...}}` with `postTitle`, `postContent` (HTML),
  `alternativeTitles`, `author`, `seriesStatus` (ONGOING, COMPLETED, ...), `genres[].name`, and
  `chapters[]`: `id`, `slug`, `number`, `createdAt` (ISO with milliseconds, Z), `chapterStatus`,
  `isAccessible`, `isLocked`, `mangaPost.slug`;
- every manga has one more chapter that is locked (paid, `isLocked`/`isAccessible: false`): a crawl must
  skip it, and its `/api/chapter` answers `isLockedByCoins` with no images;
- `/api/chapter?chapterId=`: `{"chapter": {"images": [{"url", "order"}], ...}}`;
- images under `/uploads/` on the same host.
"""

from __future__ import annotations

import datetime as dt
import json
from html import escape

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.family_pages import FamilySite, cover_or_page, find_manga
from testsupport.theme_sites.server import Request, Response, html, not_found

STATUS = {"ongoing": "ONGOING", "completed": "COMPLETED", "hiatus": "HIATUS", "cancelled": "CANCELLED"}
LOCKED_ID_OFFSET = 9000


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def as_json(value: object, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode(), "application/json")


class IkenSite(FamilySite):
    name = "iken-site"

    def __init__(self, *, api_sibling: bool = False, **kwargs: object) -> None:
        """`api_sibling`: the site at http://localhost:{port} and its API only on api.localhost:{port} (one
        server telling them apart by the Host header), as the sites whose extension sets apiUrl to
        `api.<host>`; otherwise the API is on the site itself."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.api_sibling = api_sibling
        if api_sibling:
            port = self.server.base_url.rsplit(":", 1)[1]
            self.base_url = f"http://localhost:{port}"
        self.api_url = f"http://api.localhost:{self.base_url.rsplit(':', 1)[1]}" if api_sibling else self.base_url

    def manga_url(self, manga: FixtureManga) -> str:
        return f"{self.base_url}/series/{manga.slug}"

    def chapter_id(self, chapter: FixtureChapter) -> int:
        manga = next(m for m in self.catalog if m.slug == chapter.manga_slug)
        return manga.post_id * 100 + chapter.number

    def chapter_url(self, chapter: FixtureChapter) -> str:
        """Where a crawl reads the chapter's pages."""
        return f"{self.api_url}/api/chapter?chapterId={self.chapter_id(chapter)}"

    def chapter_key(self, chapter: FixtureChapter) -> str:
        return f"{chapter.manga_slug}/{chapter.slug}"

    def route(self, request: Request) -> Response:
        if request.method != "GET":
            return not_found()
        on_api = request.headers.get("host", "").startswith("api.")
        if self.api_sibling and on_api != request.path.startswith("/api/"):
            return as_json({"message": "not here"}, 404) if on_api else not_found()
        if request.path in ("", "/"):
            return html(
                "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Iken Fixture</title>"
                "<script src='/_next/static/chunks/main-app.js' async></script></head><body>"
                "<div id='__next'></div><script>self.__next_f.push([1,\"0:{}\"])</script></body></html>"
            )
        if request.path == "/api/query":
            return self._query(request)
        if request.path == "/api/post":
            return self._post(request)
        if request.path == "/api/chapter":
            return self._chapter(request)
        if request.path.startswith("/uploads/"):
            return cover_or_page(self.catalog, [p for p in request.path.split("/") if p][1:])
        return not_found()

    def _manga(self, slug: str) -> FixtureManga | None:
        return find_manga(self.catalog, slug)

    def _post_json(self, manga: FixtureManga) -> dict[str, object]:
        return {
            "id": manga.post_id,
            "slug": manga.slug,
            "postTitle": manga.title,
            "isNovel": False,
            "featuredImage": f"{self.base_url}/uploads/covers/{manga.slug}.png",
        }

    def _query(self, request: Request) -> Response:
        page, per_page = request.query.get("page", "1"), request.query.get("perPage", "18")
        if not (page.isdigit() and per_page.isdigit() and int(page) >= 1 and int(per_page) >= 1):
            return as_json({"message": "bad paging"}, 400)
        start = (int(page) - 1) * int(per_page)
        posts = [self._post_json(m) for m in self.catalog[start : start + int(per_page)]]
        return as_json({"posts": posts, "totalCount": len(self.catalog)})

    def _chapter_json(self, manga: FixtureManga, chapter: FixtureChapter, *, locked: bool = False) -> dict[str, object]:
        return {
            "id": self.chapter_id(chapter) + (LOCKED_ID_OFFSET if locked else 0),
            "slug": chapter.slug,
            "number": chapter.number,
            "createdAt": iso(chapter.published_at),
            "chapterStatus": "PUBLIC",
            "isAccessible": not locked,
            "isLocked": locked,
            "price": 50 if locked else 0,
            "mangaPost": {"slug": manga.slug},
        }

    def _post(self, request: Request) -> Response:
        slug = request.query.get("postSlug")
        if slug is None and (post_id := request.query.get("postId", "")).isdigit():
            slug = next((m.slug for m in self.catalog if m.post_id == int(post_id)), None)
        manga = self._manga(slug or "")
        if manga is None:
            return as_json({"message": "Post not found"}, 404)
        last = manga.chapters[-1]
        locked = FixtureChapter(manga.slug, manga.title, last.number + 1, self.now, None)
        chapters = [self._chapter_json(manga, locked, locked=True)]
        chapters += [self._chapter_json(manga, c) for c in reversed(manga.chapters)]
        post = {
            **self._post_json(manga),
            "postContent": f"<p>{escape(manga.description)}</p>",
            "alternativeTitles": ", ".join(manga.alt_titles),
            "author": manga.author,
            "artist": "",
            "seriesType": "MANHWA",
            "seriesStatus": STATUS[manga.status],
            "genres": [{"id": i, "name": tag} for i, tag in enumerate(manga.tags, start=1)],
            "chapters": chapters,
        }
        return as_json({"post": post})

    def _chapter(self, request: Request) -> Response:
        raw = request.query.get("chapterId", "")
        for manga in self.catalog:
            for chapter in manga.chapters:
                if raw == str(self.chapter_id(chapter)):
                    images = [
                        {"url": f"{self.base_url}/uploads/{manga.slug}/{chapter.number}/{i}.png", "order": i}
                        for i in range(len(chapter.pages), 0, -1)  # served out of order: "order" decides
                    ]
                    return as_json({"chapter": {"id": int(raw), "images": images, "isLockedByCoins": False}})
        if raw.isdigit() and int(raw) > LOCKED_ID_OFFSET:
            return as_json({"chapter": {"id": int(raw), "images": [], "isLockedByCoins": True}})
        return as_json({"message": "Chapter not found"}, 404)
