"""The access policy as Django view decorators, for readers that are plain Django views (OPDS, CBZ, web pages)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

from accounts import policy

View = Callable[..., HttpResponse]


def locked_out(exc: policy.LockedOut) -> HttpResponse:
    response = HttpResponse(f"{exc}\n", status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(exc.retry_after_secs)
    return response


def library_reader_required(challenge: Callable[[], HttpResponse]) -> Callable[[View], View]:
    """Serve the view with `request.user` set to the library's reader (`policy.library_reader`), else `challenge()`.

    Wrong header credentials get the challenge too (clients ask the user
    again); a locked-out request gets 429 with `Retry-After`.
    """

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                request.user = policy.library_reader(request)
            except policy.LockedOut as exc:
                return locked_out(exc)
            except (policy.NotAllowed, policy.InvalidCredentials):
                return challenge()
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def library_page(login_url: str) -> Callable[[View], View]:
    """A browser page of the library: served to whoever may read it by session, else sent to `login_url`."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if policy.may_read_library(request.user):
                return view(request, *args, **kwargs)
            return redirect_to_login(request.get_full_path(), login_url)

        return wrapper

    return decorator
