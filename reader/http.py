"""Small HTTP helpers shared by the reader views: HEAD like GET, paging, a plain 400."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.views.decorators.http import require_safe

from catalog.inputs import BadInteger, parse_bounded_int


def get_or_head(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Allow GET and HEAD only; a HEAD gets GET's status and headers and no body (some OPDS clients probe with HEAD)."""

    @require_safe
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if request.method == "HEAD":
            if response.streaming:
                # The original iterator (an open file, a lazy zip) stays among the
                # response's closers and is released when the server closes it.
                response.streaming_content = []
            else:
                length = len(response.content)
                response.content = b""
                response["Content-Length"] = str(length)
        return response

    return wrapper


class BadParameter(ValueError):
    pass


MAX_PAGE = 100_000


def page_param(request: HttpRequest, name: str = "page") -> int:
    try:
        return parse_bounded_int(request.GET.get(name, "1"), low=1, high=MAX_PAGE)
    except BadInteger as exc:
        raise BadParameter(f"{name} must be a positive integer of ASCII digits, at most {MAX_PAGE:,}") from exc


def bad_request(message: str) -> HttpResponse:
    return HttpResponseBadRequest(message + "\n", content_type="text/plain; charset=utf-8")
