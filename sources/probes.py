"""Which JSON-serving family a site runs, told by asking its endpoints rather than reading its markup.

The JSON families' pages say little: a Vue or Next.js shell, a Blogger
template that many non-manga blogs share. Their APIs say it plainly, so
the probe requests one small, read-only answer per family and judges its
shape (pure functions below, tested on answers as the families publish them):

- ZeistManga: Blogger's feed of the `Series` label, `/feeds/posts/default/-/Series?alt=json`, answers
  a `feed` whose `openSearch$totalResults` counts the blog's series posts;
- PizzaReader: `/api/comics` answers `{"comics": [...]}` whose items link `/comics/...`;
- Iken: `/api/query?perPage=1` answers `{"posts": [...], "totalCount": N}`, on the `api.<host>`
  sibling or on the site itself (`api_base`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def is_blogger_manga_feed(answer: Any) -> bool:
    """A Blogger feed of the Series label with at least one post (any Blogger blog answers an empty one)."""
    feed = answer.get("feed") if isinstance(answer, dict) else None
    total = feed.get("openSearch$totalResults") if isinstance(feed, dict) else None
    text = str(total.get("$t", "")) if isinstance(total, dict) else ""
    return text.isdigit() and int(text) > 0


def is_pizzareader_catalogue(answer: Any) -> bool:
    comics = answer.get("comics") if isinstance(answer, dict) else None
    if not isinstance(comics, list):
        return False
    return all(isinstance(c, dict) and str(c.get("url", "")).startswith("/comics/") for c in comics)


def is_iken_query(answer: Any) -> bool:
    if not isinstance(answer, dict) or not isinstance(answer.get("posts"), list):
        return False
    return isinstance(answer.get("totalCount"), int) and all(
        isinstance(p, dict) and "slug" in p and "postTitle" in p for p in answer["posts"]
    )


@dataclass(frozen=True)
class EndpointProbe:
    preset: str
    path: str  # under the origin asked
    judge: Callable[[Any], bool]
    clue: str  # what a claiming answer showed, for the operator
    on_api_sibling: bool = False  # ask api.<host> first, then the site itself


PROBES = (
    EndpointProbe(
        "zeistmanga",
        "/feeds/posts/default/-/Series?alt=json&max-results=1",
        is_blogger_manga_feed,
        "a Blogger JSON feed with a Series label (/feeds/posts/default/-/Series)",
    ),
    EndpointProbe("pizzareader", "/api/comics", is_pizzareader_catalogue, "PizzaReader's catalogue API (/api/comics)"),
    EndpointProbe(
        "iken",
        "/api/query?page=1&perPage=1",
        is_iken_query,
        "Iken's query API (/api/query: posts and totalCount)",
        on_api_sibling=True,
    ),
)
