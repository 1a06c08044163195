"""Responses for page and cover images: the stored file streamed, or a Pillow-downscaled copy."""

from __future__ import annotations

import mimetypes

from django.http import HttpResponse

from catalog.models import Page
from reader.http import IMAGE_CACHE_CONTROL, stream_stored
from reader.images import downscale

THUMBNAIL_WIDTH = 320


def page_response(page: Page, max_width: int | None) -> HttpResponse:
    """The page as stored when `max_width` is None, else downscaled to it."""
    if max_width is None:
        return stream_stored(page.image.name, page.content_type, page.sha256)
    body, content_type = downscale(page.image.name, page.content_type, max_width)
    response = HttpResponse(body, content_type=content_type)
    response["ETag"] = f'"{page.sha256}-w{max_width}"'
    response["Cache-Control"] = IMAGE_CACHE_CONTROL
    return response


def cover_thumbnail_response(name: str) -> HttpResponse:
    content_type = mimetypes.guess_type(name)[0] or "image/jpeg"
    body, content_type = downscale(name, content_type, THUMBNAIL_WIDTH)
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = IMAGE_CACHE_CONTROL
    return response
