"""Who may read: any active Django user, by browser session or HTTP Basic.

OPDS clients (KOReader, Panels, Chunky) speak HTTP Basic and expect a 401
with a `WWW-Authenticate: Basic` challenge before they ask the user for a
password; browsers already carry a session cookie. Inactive users fail both
ways because Django's ModelBackend refuses them.

HTTP Basic sends the password with every request — one per streamed page —
and checking it costs a full PBKDF2 run (~0.4 s here). A password that
passed `authenticate()` is therefore remembered for BASIC_CACHE_SECS in the
cache under an HMAC of (user id, stored password hash, password): changing
the password changes the stored hash, so the old entry can never match, and
nothing in the cache reveals the password.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from reader import api_keys

REALM = "Mangalord"
BASIC_CACHE_SECS = 300


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
    """The active user behind the session, an `X-API-Key` header or the Basic credentials, else None."""
    if request.user.is_authenticated and request.user.is_active:
        return request.user
    if "X-API-Key" in request.headers:
        return api_keys.user_for_key(request.headers["X-API-Key"])
    credentials = basic_credentials(request.headers.get("Authorization", ""))
    if credentials is None:
        return None
    return basic_user(request, *credentials)


def _verified_key(user: Any, password: str) -> str:
    digest = hmac.new(settings.SECRET_KEY.encode(), f"{user.pk}\0{user.password}\0{password}".encode(), hashlib.sha256)
    return f"reader:basic:{digest.hexdigest()}"


def basic_user(request: HttpRequest, username: str, password: str) -> Any | None:
    """The active user these credentials name, verified by `authenticate()` or recently so (see module doc).

    An API key stands in for the password (apps that only ask for a user and a password).
    """
    if api_keys.looks_like_key(password):
        user = api_keys.user_for_key(password)
        if user is not None:
            return user if user.get_username() == username else None
    model = get_user_model()
    try:
        known = model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist:
        known = None
    if known is not None and known.is_active and cache.get(_verified_key(known, password)):
        return known
    user = authenticate(request, username=username, password=password)
    if user is None or not user.is_active:
        return None
    cache.set(_verified_key(user, password), True, BASIC_CACHE_SECS)
    return user


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
