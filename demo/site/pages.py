"""The demo site's HTML: ordinary server-rendered markup a selector-configured adapter can read.

The selectors that read it are `sources.demo.DEMO_SETTINGS`; change
both together.
"""

from __future__ import annotations

from html import escape

from demo.site.catalog import DemoChapter, DemoManga

PAGE_SIZE = 10


def _document(title: str, body: str) -> str:
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
        f'<body>\n<header><a class="home" href="/">Demo Manga</a></header>\n{body}\n</body></html>\n'
    )


def list_url(page: int) -> str:
    return f"/mangas?page={page}"


def manga_path(key: str) -> str:
    return f"/manga/{key}"


def chapter_path(manga_key: str, chapter_key: str) -> str:
    return f"/manga/{manga_key}/chapter/{chapter_key}"


def page_image_path(chapter: DemoChapter, index: int) -> str:
    return f"/img/pages/{chapter.key}/{index}.{chapter.page_format(index)}"


def cover_path(manga: DemoManga) -> str:
    return f"/img/covers/{manga.key}.{manga.cover_format}"


def list_page(mangas: list[DemoManga], page: int, *, markup_drift: bool) -> str:
    """One page of the newest-first list. `mangas` is the whole catalog; this slices it."""
    start = (page - 1) * PAGE_SIZE
    items = []
    for position, manga in enumerate(mangas[start : start + PAGE_SIZE]):
        href = f' href="{escape(manga_path(manga.key))}"'
        title = f' title="{escape(manga.title)}"'
        # Markup drift: some anchors lose their href, others their title, as when a
        # site redesign moves them to a child element the selector no longer reads.
        if markup_drift and position % 4 == 1:
            href = ""
        if markup_drift and position % 4 == 3:
            title = ' title=""'
        items.append(f'<li class="manga-item"><a class="manga-link"{href}{title}>{escape(manga.title)}</a></li>')
    nav = []
    if page > 1:
        nav.append(f'<a class="prev" href="{list_url(page - 1)}">Previous</a>')
    if start + PAGE_SIZE < len(mangas):
        nav.append(f'<a class="next" rel="next" href="{list_url(page + 1)}">Next</a>')
    body = (
        f'<h1>Latest updates</h1>\n<ul class="manga-list">\n{chr(10).join(items)}\n</ul>\n'
        f'<nav class="pagination">{" ".join(nav)}</nav>'
    )
    return _document(f"Latest updates - page {page}", body)


def detail_page(manga: DemoManga) -> str:
    alt = "".join(f"<li>{escape(t)}</li>" for t in manga.alt_titles)
    authors = "".join(
        f'<li><a class="author" href="/author/{i}">{escape(a)}</a></li>' for i, a in enumerate(manga.authors)
    )
    tags = "".join(f'<li><a class="tag" href="/tag/{escape(t)}">{escape(t)}</a></li>' for t in manga.tags)
    chapters = []
    for chapter in sorted(manga.chapters, key=lambda c: c.number, reverse=True):
        chapters.append(
            f'<li class="chapter"><a class="chapter-link" href="{escape(chapter_path(manga.key, chapter.key))}">'
            f"Chapter {chapter.number}: {escape(chapter.title)}</a> "
            f'<time datetime="{chapter.published_at.isoformat()}">{chapter.published_at:%Y-%m-%d}</time></li>'
        )
    body = f"""<article class="manga-detail" data-key="{escape(manga.key)}">
<h1 class="manga-title">{escape(manga.title)}</h1>
<ul class="alt-titles">{alt}</ul>
<img class="cover" src="{escape(cover_path(manga))}" alt="Cover">
<div class="description"><p>{escape(manga.description)}</p></div>
<ul class="authors">{authors}</ul>
<p>Status: <span class="status">{escape(manga.status)}</span></p>
<ul class="tags">{tags}</ul>
<h2>Chapters</h2>
<ul class="chapters">
{chr(10).join(chapters)}
</ul>
</article>"""
    return _document(manga.title, body)


def chapter_page(manga: DemoManga, chapter: DemoChapter, *, base_url: str, image_base: str | None) -> str:
    """The reader: one <img> per page. Even pages use absolute URLs, odd ones relative, as real sites mix both.

    `image_base` (a fault) points every image at another origin instead.
    """
    images = []
    for index in range(1, chapter.pages + 1):
        path = page_image_path(chapter, index)
        if image_base:
            src = image_base.rstrip("/") + path
        elif index % 2 == 0:
            src = base_url + path
        else:
            src = path
        images.append(f'<img class="page" src="{escape(src)}" alt="Page {index}" width="600" height="850">')
    body = (
        f'<h1><a href="{escape(manga_path(manga.key))}">{escape(manga.title)}</a> - Chapter {chapter.number}</h1>\n'
        f'<div class="reader">\n{chr(10).join(images)}\n</div>'
    )
    return _document(f"{manga.title} - Chapter {chapter.number}", body)


def login_page() -> str:
    body = """<h1>Sign in</h1>
<form id="login-form" method="post" action="/login">
<label>User <input name="username"></label>
<label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button>
</form>"""
    return _document("Sign in", body)


def error_page(status: int, message: str) -> str:
    return _document(f"{status} {message}", f"<h1>{status}</h1><p>{escape(message)}</p>")


def index_page() -> str:
    return _document("Demo Manga", f'<p><a href="{list_url(1)}">Latest updates</a></p>')
