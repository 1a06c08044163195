"""Who may read: any active Django user, by browser session or HTTP Basic.

OPDS clients (KOReader, Panels, Chunky) speak HTTP Basic and expect a 401
with a `WWW-Authenticate: Basic` challenge before they ask the user for a
password; browsers already carry a session cookie. Inactive users fail both
ways because Django's ModelBackend refuses them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth import authenticate
from django.http import HttpRequest, HttpResponse

REALM = "Mangalord"


def basic_credentials(header: str) -> tuple[str, str] | None:
    """(username, password) from an `Authorization: Basic ...` header value, or None when it is not one."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, sep, password = decoded.partition(":")
    return (username, password) if sep else None


def challenge() -> HttpResponse:
    response = HttpResponse("Authentication required.\n", status=401, content_type="text/plain; charset=utf-8")
    response["WWW-Authenticate"] = f'Basic realm="{REALM}", charset="UTF-8"'
    return response


def reader_user(request: HttpRequest) -> Any | None:
    """The active user behind the session or the Basic credentials, else None."""
    if request.user.is_authenticated and request.user.is_active:
        return request.user
    credentials = basic_credentials(request.headers.get("Authorization", ""))
    if credentials is None:
        return None
    user = authenticate(request, username=credentials[0], password=credentials[1])
    return user if user is not None and user.is_active else None


def reader_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer 401 + Basic challenge unless an active user reads; sets `request.user` to them."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = reader_user(request)
        if user is None:
            return challenge()
        request.user = user
        return view(request, *args, **kwargs)

    return wrapper
