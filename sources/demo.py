"""The `demo` adapter: the html adapter with the built-in demo site's selectors preset.

A demo Source row needs only its base URL; its `settings` may override any
key (e.g. `{"requires_browser": true}` to crawl the demo site through Chromium).
"""

from __future__ import annotations

from typing import Any

DEMO_SETTINGS: dict[str, Any] = {
    "list_url": "/mangas?page={page}",
    "list_anchor": "ul.manga-list a.manga-link",
    "list_next": "nav.pagination a.next",
    "manga_key_pattern": r"^/manga/([\w-]+)$",
    "title": "h1.manga-title",
    "alt_titles": "ul.alt-titles li",
    "description": "div.description",
    "authors": "ul.authors a.author",
    "status": "span.status",
    "tags": "ul.tags a.tag",
    "cover": "img.cover",
    "chapter_item": "ul.chapters li.chapter",
    "chapter_link": "a.chapter-link",
    "chapter_date": "time",
    "chapter_key_pattern": r"/chapter/([\w-]+)$",
    "chapter_number_pattern": r"Chapter (\d+(?:\.\d+)?)",
    "page_image": "div.reader img.page",
    "login_wall_selector": "form#login-form",
    # The demo site is our own, on this machine: crawl it briskly (a real site keeps the polite defaults).
    "rate_limit": 200,
    "burst": 50,
    "max_concurrency": 8,
}


def demo_settings(**overrides: Any) -> dict[str, Any]:
    """A copy of the demo site's adapter settings (also usable for an `html` Source row pointed at it)."""
    return {**DEMO_SETTINGS, **overrides}
