"""Request guards that hold for every view: the web reader, OPDS, the APIs and the admin."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


def reject_nul_characters(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[..., HttpResponse]:
    """A NUL in the path, a query parameter or a request header is a 400 before any view runs.

    PostgreSQL text cannot hold U+0000, so `?q=%00` reaching a search (ours,
    DRF's or the admin's) would end as a 500 from the database driver, and so
    would a header the product stores: the lockout keeps a failed sign-in's
    User-Agent, KOReader names its user in `x-auth-user`. Form fields already
    refuse NUL (Django's ProhibitNullCharactersValidator); query strings and
    headers have no such guard.
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        if (
            "\x00" in request.path
            or any("\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists())
            or any("\x00" in value for value in request.headers.values())
        ):
            return HttpResponseBadRequest(
                "The request holds a NUL character (%00), which no parameter or header accepts.\n",
                content_type="text/plain; charset=utf-8",
            )
        return get_response(request)

    return middleware
