"""How a request proves who it is: a browser session, or credentials in a header (Basic, Token, and more to come).

A header scheme reads its credential from the request and verifies it
against the lockout (`accounts.lockout`): while the account or the address
is locked every attempt is refused, the right one too, and every miss is
counted. The built-in schemes:

- `Basic` (`Authorization: Basic ...`): username and password, checked by
  `django.contrib.auth.authenticate()`. OPDS clients send it with every
  request (one per streamed page) and a check costs a full PBKDF2 run
  (~0.4 s), so a password that passed is remembered for BASIC_CACHE_SECS
  under an HMAC of (user id, stored password hash, password): changing the
  password changes the stored hash, so the old entry can never match, and
  nothing in the cache reveals the password. The lockout is checked before
  the cache, so a remembered password is refused while locked like any other.
- `Token` (`Authorization: Token <key>`): a DRF token (`POST /api/v1/auth/token/`).

A new protocol's credential (a per-user API key in `X-API-Key`, say) is one
`HeaderScheme` passed to `register_scheme`, usually with `verify_key` as its
verifier, and every reader that goes through `accounts.policy` accepts it,
lockout included.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.core.cache import cache
from django.http import HttpRequest
from rest_framework.authtoken.models import Token

from accounts import lockout

BASIC_CACHE_SECS = 300


class InvalidCredentials(Exception):
    """The request carried credentials of a scheme we know and they were wrong, or name an inactive user."""


@dataclass(frozen=True)
class HeaderScheme:
    """One way to carry credentials in a request header.

    `read` returns the credential the request carries for this scheme, or
    None when it carries none; `verify` returns the active user it proves or
    raises `InvalidCredentials` / `accounts.lockout.LockedOut`.
    """

    name: str
    read: Callable[[HttpRequest], str | None]
    verify: Callable[[HttpRequest, str], Any]


def authorization(scheme_word: str) -> Callable[[HttpRequest], str | None]:
    """A reader for `Authorization: <scheme_word> <value>` (the word case-insensitive)."""

    def read(request: HttpRequest) -> str | None:
        word, _, value = request.headers.get("Authorization", "").partition(" ")
        return value.strip() if word.lower() == scheme_word.lower() else None

    return read


def basic_credentials(value: str) -> tuple[str, str] | None:
    """(username, password) from the base64 part of a Basic header, or None when it does not decode to one."""
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, sep, password = decoded.partition(":")
    return (username, password) if sep else None


def _verified_key(user: Any, password: str) -> str:
    digest = hmac.new(settings.SECRET_KEY.encode(), f"{user.pk}\0{user.password}\0{password}".encode(), hashlib.sha256)
    return f"accounts:basic:{digest.hexdigest()}"


def verify_password(request: HttpRequest, username: str, password: str) -> Any:
    """The active user these credentials name (remembered for a while, see the module doc); lockout enforced."""
    lockout.refuse_if_locked(request, username)
    model = get_user_model()
    known = model._default_manager.filter(**{model.USERNAME_FIELD: username}).first()
    if known is not None and known.is_active and cache.get(_verified_key(known, password)):
        return known
    user = authenticate(request, username=username, password=password)
    if user is None or not user.is_active:
        lockout.refuse_if_locked(request, username)  # this failure may be the one that locks
        raise InvalidCredentials("Invalid username or password.")
    cache.set(_verified_key(user, password), True, BASIC_CACHE_SECS)
    return user


def verify_basic(request: HttpRequest, value: str) -> Any:
    credentials = basic_credentials(value)
    if credentials is None:
        raise InvalidCredentials("Malformed Basic credentials.")
    return verify_password(request, *credentials)


def verify_key(request: HttpRequest, key: str, *, scheme: str, owner: Callable[[str], Any]) -> Any:
    """The active owner of secret `key` (`owner` looks it up, None when unknown); a miss counts toward the lockout."""
    lockout.refuse_if_locked(request, None)
    user = owner(key) if key else None
    if user is None:
        lockout.record_failure(request, scheme=scheme)
        lockout.refuse_if_locked(request, None)
        raise InvalidCredentials("Invalid key.")
    if not user.is_active:
        raise InvalidCredentials("User inactive or deleted.")
    return user


def token_owner(key: str) -> Any:
    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token is not None else None


def verify_token(request: HttpRequest, value: str) -> Any:
    return verify_key(request, value, scheme="token", owner=token_owner)


_schemes: list[HeaderScheme] = [
    HeaderScheme("Basic", authorization("Basic"), verify_basic),
    HeaderScheme("Token", authorization("Token"), verify_token),
]


def register_scheme(scheme: HeaderScheme) -> None:
    """Accept another header credential everywhere (idempotent by name; call it from an `AppConfig.ready()`)."""
    if all(existing.name != scheme.name for existing in _schemes):
        _schemes.append(scheme)


def header_user(request: HttpRequest) -> Any | None:
    """The user the request's header credentials prove, or None when it carries none; raises when they fail."""
    for scheme in _schemes:
        value = scheme.read(request)
        if value is not None:
            return scheme.verify(request, value)
    return None
