"""Responses for page and cover images: the stored file streamed, or a scaled or converted copy kept in storage."""

from __future__ import annotations

import mimetypes

from django.http import Http404, HttpRequest, HttpResponse

from catalog.models import Page
from catalog.serving.responder import serve_stored
from reader.images import cache_width, needs_downscale, scaled_type, stored_copy

THUMBNAIL_WIDTH = 320


def page_response(
    request: HttpRequest, page: Page, max_width: int | None, *, as_type: str | None = None
) -> HttpResponse:
    """The page as stored; scaled to a copy width (`reader.images.COPY_WIDTHS`) at most `max_width` when the page
    is wider than that; as `as_type` when given and different."""
    name, content_type, etag = page_copy(page, max_width, as_type=as_type)
    return serve_stored(request, name, content_type, etag=etag)


def page_copy(page: Page, max_width: int | None, *, as_type: str | None = None) -> tuple[str, str, str]:
    """(storage name, type, ETag) of what `page_response` serves, the copy made now if it is missing; Http404
    when the page's file is."""
    width = cache_width(max_width) if needs_downscale(page.width, max_width) and max_width else None
    if width is not None and width >= page.width:  # asked below the narrowest step, which the page is not wider than
        width = None
    wanted = as_type or (scaled_type(page.content_type) if width else page.content_type)
    if width is None and wanted == page.content_type:
        return page.image.name, page.content_type, page.sha256
    name = _copy(page.image.name, "page", width, wanted)
    return name, wanted, f"{page.sha256}-w{width or 0}-{wanted.split('/')[1]}"


def cover_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "image/jpeg"


def thumbnail_type(name: str) -> str:
    return scaled_type(cover_type(name))


def cover_thumbnail_response(request: HttpRequest, name: str) -> HttpResponse:
    content_type = thumbnail_type(name)
    return serve_stored(request, _copy(name, "thumb", THUMBNAIL_WIDTH, content_type), content_type)


def _copy(original: str, key: str, width: int | None, content_type: str) -> str:
    try:
        return stored_copy(original, key, width, content_type)
    except FileNotFoundError as exc:
        raise Http404("The stored file is missing.") from exc
