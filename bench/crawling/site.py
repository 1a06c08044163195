"""A static Madara-theme site on disk: the catalog plan, its JPEG pages (cached) and the theme's markup.

The markup is what the Madara WordPress theme prints and what our `madara`
preset reads (the fixture site `testsupport.theme_sites.madara` follows
the same conventions, served dynamically):
- the archive `/manga/page/N/?m_orderby=latest`: `div.page-item-detail` cards
  with a "HOT" badge beside the title, `div.nav-previous` "Older Posts" while
  older pages exist (a static file serves page 1 too; the theme redirects it);
- detail pages `/manga/{slug}/` with the chapter list printed inline in
  `div#manga-chapters-holder`, as the theme did before its ajax list, so a
  crawl needs no second request (`li.wp-manga-chapter`, calendar dates in
  `span.chapter-release-date i`);
- readers `/manga/{slug}/{chapter}/` listing every page in `div.page-break img`
  with the URL in `data-src` padded by whitespace (the crawler asks for
  `?style=list`, which a static server ignores);
- images under `/wp-content/uploads/WP-manga/data/manga_{post id}/{chapter hash}/NN.jpg`,
  covers under `/wp-content/uploads/{year}/{month}/{slug}-193x278.jpg`.

Page images are greyscale manga-like JPEGs (panels, tones, noise, ink lines),
800-1100 x 1200-1600 px, about 285 KiB on average like real scans. Each is a
function of its path and the image parameters, rendered once into a cache
directory named after those parameters, so every later run (and every plan
size) reuses what is there. HTML is written per run: it carries the site's
absolute URLs, as WordPress prints them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

UPLOADS = "wp-content/uploads"
PLACEHOLDER = (
    "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%20175%20238'%3E%3C/svg%3E"
)
_FIRST_RELEASE = dt.date(2025, 11, 3)
_ADJECTIVES = ("Crimson", "Silent", "Iron", "Paper", "Hidden", "Azure", "Last", "Broken", "Golden", "Quiet")
_NOUNS = ("Tide", "Wolf", "Harbor", "Garden", "Moon", "Blade", "Archive", "Empire", "Lantern", "Academy")


@dataclass(frozen=True)
class ImageSpec:
    """What a page image looks like; the cache directory is named after these values."""

    width: tuple[int, int] = (800, 1100)
    height: tuple[int, int] = (1200, 1600)
    noise: float = 10.5  # the grain that makes scans weigh what they weigh (~285 KiB at these sizes)
    quality: int = 80
    seed: int = 7

    @property
    def key(self) -> str:
        return (
            f"v1-w{self.width[0]}-{self.width[1]}-h{self.height[0]}-{self.height[1]}"
            f"-n{self.noise:g}-q{self.quality}-s{self.seed}"
        )


@dataclass(frozen=True)
class PlannedChapter:
    manga_slug: str
    post_id: int
    number: int
    pages: int
    released: dt.date

    @property
    def slug(self) -> str:
        return f"chapter-{self.number}"

    @property
    def key(self) -> str:
        """Our stored `source_chapter_key`: the chapter URL's whole path."""
        return f"manga/{self.manga_slug}/{self.slug}"

    @property
    def folder(self) -> str:
        # The theme stores a chapter's uploads under a hashed folder name.
        return hashlib.md5(f"{self.post_id}/{self.slug}".encode()).hexdigest()

    def page_path(self, index: int) -> str:
        """Site path of page `index` (0-based, as we store it)."""
        return f"{UPLOADS}/WP-manga/data/manga_{self.post_id}/{self.folder}/{index + 1:02d}.jpg"


@dataclass(frozen=True)
class PlannedManga:
    post_id: int
    slug: str
    title: str
    chapters: tuple[PlannedChapter, ...]  # ascending

    @property
    def cover_path(self) -> str:
        return f"{UPLOADS}/2025/11/{self.slug}-193x278.jpg"


@dataclass(frozen=True)
class SitePlan:
    """`pages` pages in chapters of `pages_per_chapter`, `chapters_per_manga` chapters a manga."""

    pages: int
    pages_per_chapter: int = 20
    chapters_per_manga: int = 10
    per_list_page: int = 12  # the theme's archive default

    def mangas(self) -> list[PlannedManga]:
        """Newest first, as the archive lists them; the last chapter takes what is left."""
        mangas, left, index = [], self.pages, 0
        while left > 0:
            post_id = 1000 + index * 7
            slug = f"{_ADJECTIVES[index % 10].lower()}-{_NOUNS[index // 10 % 10].lower()}-{index + 1}"
            title = f"{_ADJECTIVES[index % 10]} {_NOUNS[index // 10 % 10]} {index + 1}"
            chapters = []
            for number in range(1, self.chapters_per_manga + 1):
                if left <= 0:
                    break
                count = min(self.pages_per_chapter, left)
                left -= count
                released = _FIRST_RELEASE + dt.timedelta(days=7 * number + index)
                chapters.append(PlannedChapter(slug, post_id, number, count, released))
            mangas.append(PlannedManga(post_id, slug, title, tuple(chapters)))
            index += 1
        return mangas

    def expected_pages(self) -> dict[tuple[str, int], str]:
        """(chapter key, page index) -> the page's path on the site: what a full crawl must store."""
        return {
            (chapter.key, index): chapter.page_path(index)
            for manga in self.mangas()
            for chapter in manga.chapters
            for index in range(chapter.pages)
        }

    def image_paths(self) -> list[str]:
        """Every page path, in reading order (what aria2c is given)."""
        return list(self.expected_pages().values())


# --- images ---------------------------------------------------------------------------------


def _seed(spec: ImageSpec, path: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{spec.seed}:{path}".encode()).digest()[:8], "big")


@cache
def _grain(spec: ImageSpec) -> tuple[np.ndarray, ...]:
    """A few large noise fields; each page crops its own window from one (cheaper than fresh noise)."""
    rng = np.random.default_rng(spec.seed)
    # Covers (193 x 278) crop from the same fields, so they are never smaller than that.
    shape = (max(spec.height[1], 278) + 100, max(spec.width[1], 193) + 100)
    return tuple(np.clip(rng.normal(0.0, 1.0, shape), -3, 3).astype(np.float32) for _ in range(4))


def render_page(spec: ImageSpec, path: str, size: tuple[int, int] | None = None) -> bytes:
    """A greyscale page of panels: flat and graded tones under grain, white gutters, ink strokes."""
    rng = np.random.default_rng(_seed(spec, path))
    width, height = size or (
        int(rng.integers(spec.width[0], spec.width[1] + 1)),
        int(rng.integers(spec.height[0], spec.height[1] + 1)),
    )
    grain = _grain(spec)[int(rng.integers(0, 4))]
    top, left = int(rng.integers(0, grain.shape[0] - height + 1)), int(rng.integers(0, grain.shape[1] - width + 1))
    noise = grain[top : top + height, left : left + width]
    tone = np.zeros((height, width), np.float32)
    amplitude = np.zeros((height, width), np.float32)
    margin, gutter = max(2, width // 30), max(1, width // 60)
    rows = int(rng.integers(2, 5))
    row_height = (height - 2 * margin) // rows
    for row in range(rows):
        cols = int(rng.integers(1, 3))
        col_width = (width - 2 * margin) // cols
        for col in range(cols):
            x0, y0 = margin + col * col_width, margin + row * row_height
            x1, y1 = x0 + col_width - gutter, y0 + row_height - gutter
            if x1 <= x0 or y1 <= y0:
                continue
            shade = np.linspace(0.0, float(rng.uniform(-60, 60)), y1 - y0, dtype=np.float32)[:, None]
            tone[y0:y1, x0:x1] = float(rng.uniform(60, 220)) + shade
            amplitude[y0:y1, x0:x1] = float(rng.uniform(0.5, 1.5))
    pixels = np.where(amplitude > 0, tone + noise * spec.noise * amplitude, 250.0)
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(rows * 6):
        start = (int(rng.integers(0, width)), int(rng.integers(0, height)))
        end = (int(rng.integers(0, width)), int(rng.integers(0, height)))
        draw.line([start, end], fill=int(rng.integers(0, 60)), width=int(rng.integers(1, 5)))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=spec.quality)
    return out.getvalue()


def _render_into(spec: ImageSpec, root: str, path: str, size: tuple[int, int] | None) -> None:
    target = Path(root) / path
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temp.write_bytes(render_page(spec, path, size))
    os.replace(temp, target)  # a run killed mid-write leaves no half image under the real name


def ensure_images(plan: SitePlan, spec: ImageSpec, cache_root: Path, *, workers: int | None = None) -> Path:
    """The image directory for `spec` with every page and cover of `plan` in it; renders what is missing."""
    root = cache_root / f"images-{spec.key}"
    covers = [(m.cover_path, (193, 278)) for m in plan.mangas()]
    wanted = [(p, None) for p in plan.image_paths()] + covers
    missing = [(path, size) for path, size in wanted if not (root / path).exists()]
    if not missing:
        return root
    print(f"rendering {len(missing):,} images into {root} (once; later runs reuse them)", flush=True)
    if len(missing) < 50:
        for path, size in missing:
            _render_into(spec, str(root), path, size)
        return root
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count()) as pool:
        jobs = [pool.submit(_render_into, spec, str(root), path, size) for path, size in missing]
        for done, job in enumerate(jobs, 1):
            job.result()
            if done % 500 == 0:
                print(f"  {done:,} / {len(missing):,}", flush=True)
    return root


# --- markup ---------------------------------------------------------------------------------


def _document(base_url: str, title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en-US'><head><meta charset='UTF-8'>"
        f"<title>{escape(title)} - Madara</title>"
        f'<script id=\'wp-manga-js-extra\'>var manga = {{"ajax_url":"{base_url}/wp-admin/admin-ajax.php",'
        '"enable_manga_view":"1"};</script>'
        "</head><body class='wp-theme-madara'><div class='wrap'><div class='body-wrap'>"
        f"<div class='site-content'>{body}</div></div></div></body></html>"
    )


def _manga_url(base_url: str, manga: PlannedManga) -> str:
    return f"{base_url}/manga/{manga.slug}/"


def _chapter_url(base_url: str, chapter: PlannedChapter) -> str:
    return f"{base_url}/manga/{chapter.manga_slug}/{chapter.slug}/"


def _card(base_url: str, manga: PlannedManga) -> str:
    url, latest = _manga_url(base_url, manga), manga.chapters[-1]
    return (
        "<div class='col-6 col-md-3 badge-pos-1'><div class='page-item-detail manga'>"
        f"<div id='manga-item-{manga.post_id}' class='item-thumb hover-details c-image-hover'"
        f" data-post-id='{manga.post_id}'><a href='{url}' title='{escape(manga.title)}'>"
        f"<img width='175' height='238' src='{PLACEHOLDER}' data-src='{base_url}/{manga.cover_path}'"
        " class='img-responsive effect-fade lazyload'></a></div>"
        "<div class='item-summary'><div class='post-title font-title'><h3 class='h5'>"
        f"<span class='manga-title-badges hot'>HOT</span><a href='{url}'>{escape(manga.title)}</a></h3></div>"
        "<div class='list-chapter'><div class='chapter-item'><span class='chapter font-meta'>"
        f"<a href='{_chapter_url(base_url, latest)}' class='btn-link'> Chapter {latest.number} </a></span></div></div>"
        "</div></div></div>"
    )


def archive_page(base_url: str, mangas: list[PlannedManga], number: int, last: int) -> str:
    older = ""
    if number < last:
        older = (
            "<div class='nav-links'><div class='nav-previous float-left'>"
            f"<a href='{base_url}/manga/page/{number + 1}/?m_orderby=latest'>Older Posts</a></div></div>"
        )
    cards = "".join(_card(base_url, m) for m in mangas)
    body = (
        "<div class='c-page-content'><div class='tab-content-wrap'><div class='c-tabs-item'>"
        f"<div class='page-listing-item'><div class='row row-eq-height'>{cards}</div></div>"
        f"</div></div>{older}</div>"
    )
    return _document(base_url, "Manga", body)


def _chapter_items(base_url: str, manga: PlannedManga) -> str:
    items = "".join(
        f"<li class='wp-manga-chapter    '><a href='{_chapter_url(base_url, c)}'> Chapter {c.number} </a>"
        f"<span class='chapter-release-date'><i>{c.released.strftime('%B %d, %Y')}</i></span></li>"
        for c in reversed(manga.chapters)
    )
    return (
        "<div class='page-content-listing single-page'><div class='listing-chapters_wrap cols-1 show-more'>"
        f"<ul class='main version-chap no-volumn active'>{items}</ul></div></div>"
    )


def detail_page(base_url: str, manga: PlannedManga) -> str:
    field = "<div class='post-content_item'><div class='summary-heading'><h5>{}</h5></div><div class='summary-content'>{}</div></div>"
    body = (
        "<div class='profile-manga summary-layout-1'><div class='container'><div class='row'><div class='col-12'>"
        f"<div class='post-title'><h1><span class='manga-title-badges hot'>HOT</span> {escape(manga.title)} </h1></div>"
        "<div class='tab-summary'><div class='summary_image'>"
        f"<a href='{_manga_url(base_url, manga)}'><img class='img-responsive lazyload' src='{PLACEHOLDER}'"
        f" data-src='{base_url}/{manga.cover_path}' alt='{escape(manga.title)}'></a></div>"
        "<div class='summary_content_wrap'><div class='summary_content'><div class='post-content'>"
        + field.format("Rating", "Average 4.4 / 5 out of 31")
        + field.format("Alternative", f" {escape(manga.title)} (Official) ")
        + field.format(
            "Author(s)",
            f"<div class='author-content'><a href='{base_url}/manga-author/studio-{manga.post_id}/'"
            f" rel='tag'>Studio {manga.post_id}</a></div>",
        )
        + field.format(
            "Genre(s)",
            f"<div class='genres-content'><a href='{base_url}/manga-genre/action/' rel='tag'>Action</a>, "
            f"<a href='{base_url}/manga-genre/drama/' rel='tag'>Drama</a></div>",
        )
        + "</div><div class='post-status'>"
        + field.format("Status", " OnGoing ")
        + "</div></div></div></div></div></div></div></div>"
        "<div class='c-page-content style-1'><div class='content-area'><div class='container'><div class='row'>"
        "<div class='main-col col-md-8 col-sm-8'><div class='main-col-inner'>"
        "<div class='c-page'><div class='c-page__content'><div class='description-summary'>"
        f"<div class='summary__content show-more'><p>{escape(manga.title)}: {len(manga.chapters)} chapters so far.</p>"
        "</div></div></div></div>"
        "<div class='c-page'><div class='c-page__content'>"
        f"<div id='manga-chapters-holder' data-id='{manga.post_id}'>{_chapter_items(base_url, manga)}</div>"
        "</div></div></div></div></div></div></div></div>"
    )
    return _document(base_url, manga.title, body)


def reader_page(base_url: str, manga: PlannedManga, chapter: PlannedChapter) -> str:
    breaks = "".join(
        f"<div class='page-break no-gaps'><img id='image-{i}' data-src='\n\t\t\t{base_url}/{chapter.page_path(i)} '"
        " class='wp-manga-chapter-img img-responsive lazyload effect-fade'></div>"
        for i in range(chapter.pages)
    )
    body = (
        "<div class='c-page-content style-2'><div class='content-area'><div class='container'>"
        f"<div class='reading-content'><input type='hidden' id='wp-manga-current-chap' data-id='{manga.post_id}'>"
        f"{breaks}</div></div></div></div>"
    )
    return _document(base_url, f"{manga.title} - Chapter {chapter.number}", body)


def _documents(base_url: str, plan: SitePlan) -> Iterator[tuple[str, str]]:
    mangas = plan.mangas()
    per = plan.per_list_page
    last = -(-len(mangas) // per)
    for number in range(1, last + 1):
        yield (
            f"manga/page/{number}/index.html",
            archive_page(base_url, mangas[(number - 1) * per : number * per], number, last),
        )
    for manga in mangas:
        yield f"manga/{manga.slug}/index.html", detail_page(base_url, manga)
        for chapter in manga.chapters:
            yield f"manga/{manga.slug}/{chapter.slug}/index.html", reader_page(base_url, manga, chapter)


def write_site(root: Path, base_url: str, plan: SitePlan, images: Path) -> Path:
    """Write the site's HTML under `root` for `base_url`; its uploads are a link to the image cache."""
    base_url = base_url.rstrip("/")
    for path, text in _documents(base_url, plan):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (root / "wp-content").symlink_to(images / "wp-content", target_is_directory=True)
    return root


def sha256_files(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """sha256 of each file under `root` (also warms the page cache before anything is timed)."""
    digests = {}
    for path in paths:
        digest = hashlib.sha256()
        with open(root / path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        digests[path] = digest.hexdigest()
    return digests
