"""`/favicon.ico`: browsers ask for it on every page without a `<link rel=icon>`; a 404 there is a console error."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

FAVICON = Path(__file__).resolve().parent / "static" / "favicon.ico"


@cache
def _icon() -> bytes:
    return FAVICON.read_bytes()


@require_safe
@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_icon(), content_type="image/x-icon")
