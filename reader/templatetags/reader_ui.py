"""Template helpers of the web app: the reader's theme, the library's query links."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.http import urlencode

from reader.library_query import LibraryQuery
from reader.theme import theme_of

register = template.Library()


@register.simple_tag(takes_context=True)
def reader_theme(context: dict[str, Any]) -> str:
    """The signed-in user's stored theme (one query per page), "system" for everyone else."""
    request = context.get("request")
    return theme_of(getattr(request, "user", None))


@register.simple_tag
def library_link(query: LibraryQuery, **changes: Any) -> str:
    """`?…` asking for `query` again with `changes` (page links, a sort picked with the filters kept)."""
    params = query.params(**changes)
    return "?" + urlencode(params) if params else "?"


@register.filter
def web_url(value: str) -> str:
    """`value` if it is an http(s) URL, else "": a crawled link never becomes a `javascript:` href."""
    text = str(value or "").strip()
    return text if text.lower().startswith(("http://", "https://")) else ""
