"""What the library page's query string asks for: search, sort, filters and page, checked before any query runs.

A pure function of the parameters (and the sources that exist), so every
refusal is tested without a request: a bad value is a `BadParameter` naming
the parameter, the value and what is accepted, which the view shows on a
400 page with the library's own layout.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from catalog.inputs import BadInteger, parse_bounded_int
from catalog.models import Manga
from reader.http import BadParameter

SORTS = {
    "updated": "Recently updated",
    "title": "Title",
    "added": "Recently added",
    "unread": "Most unread",
}
DEFAULT_SORT = "updated"
MAX_PAGE = 100_000
MAX_QUERY = 200
MAX_CURSOR = 1_000  # a title cursor holds a title (at most 500 characters) and an id, base64-encoded


@dataclass(frozen=True)
class LibraryQuery:
    q: str = ""
    sort: str = DEFAULT_SORT
    # True when the reader picked the sort; a search without one ranks by best match.
    sort_chosen: bool = False
    tag: str = ""
    status: str = ""
    source: str = ""
    page: int = 1
    # A seek cursor of the page's next (`after`) or previous (`before`) link, as the link wrote it.
    after: str = ""
    before: str = ""

    @property
    def filtered(self) -> bool:
        return bool(self.q or self.tag or self.status or self.source)

    def params(self, **changes: str | int) -> dict[str, str]:
        """The query string that asks for this listing again (with `changes`), without defaults.

        A cursor is never carried over: only the page links that pass one (`after=`, `before=`) seek.
        """
        values = {
            "q": self.q,
            "sort": self.sort if self.sort_chosen else "",
            "tag": self.tag,
            "status": self.status,
            "source": self.source,
            "page": str(self.page) if self.page > 1 else "",
        }
        values.update({key: str(value) for key, value in changes.items()})
        if values.get("page") == "1":
            values["page"] = ""
        return {key: value for key, value in values.items() if value}


def _choice(params: Mapping[str, str], name: str, accepted: Collection[str]) -> str:
    value = params.get(name, "").strip()
    if value and value not in accepted:
        shown = ", ".join(sorted(accepted)) if len(accepted) <= 12 else f"one of the {len(accepted)} listed"
        raise BadParameter(f"{name}={value!r} is not one we know: use {shown}")
    return value


def parse_library_query(params: Mapping[str, str], *, sources: Collection[str]) -> LibraryQuery:
    """The listing `params` ask for; `BadParameter` for a page that is no positive number or an unknown choice."""
    raw_page = params.get("page", "1").strip() or "1"
    try:
        page = parse_bounded_int(raw_page, low=1, high=MAX_PAGE)
    except BadInteger as exc:
        raise BadParameter(
            f"page={raw_page[:20]!r} is not a page number: use a whole number from 1 to {MAX_PAGE:,}"
        ) from exc
    sort = _choice(params, "sort", SORTS)
    after, before = (params.get(name, "").strip() for name in ("after", "before"))
    if after and before:
        raise BadParameter("give one cursor: after= pages forward, before= pages back")
    return LibraryQuery(
        q=params.get("q", "").strip()[:MAX_QUERY],
        sort=sort or DEFAULT_SORT,
        sort_chosen=bool(sort),
        tag=params.get("tag", "").strip()[:100],
        status=_choice(params, "status", Manga.Status.values),
        source=_choice(params, "source", sources),
        page=page,
        after=after[:MAX_CURSOR],
        before=before[:MAX_CURSOR],
    )
