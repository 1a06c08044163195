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
  that cache, so a password it holds is refused while locked like any other.
  A per-user API key (`accounts.api_keys`) stands in for the password, for
  apps that only ask for a user name and a password (Mihon, OPDS apps).
- `Token` (`Authorization: Token <key>`): a DRF token (`POST /api/v1/auth/token/`).
- `X-API-Key`: a per-user API key.

Any header credential that passed is then trusted for a short burst in the
process without a query (`accounts.remembered`), until a failed login or a
change to its user, key or token.

A user proven by an API key (any way it is sent) comes back marked with the
key's scope (`api_keys.signed_in_with`): a `read` key never passes the
operator check, whoever owns it.

Keys outside a header go through the same checks: a key in the catalog URL
(`verify_api_key`) and KOReader's sync headers (`verify_kosync`). A wrong key
counts toward the lockout like a wrong password: toward the account it names
(Basic's user name, kosync's `x-auth-user`) and the address, or the address
alone when it names none; a right key is refused while its owner's account or
the address is locked.

A new protocol's header credential is one `HeaderScheme` passed to
`register_scheme`, usually with `verify_key` as its verifier, and every
reader that goes through `accounts.policy` accepts it, lockout included.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.core.cache import cache
from django.http import HttpRequest
from rest_framework.authtoken.models import Token

from accounts import api_keys, lockout, remembered, usernames

BASIC_CACHE_SECS = 300
# What a 401 asks of clients that speak HTTP Basic (OPDS apps, Mihon): they send credentials only after it.
BASIC_CHALLENGE = 'Basic realm="Mangalord", charset="UTF-8"'


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


def header(name: str) -> Callable[[HttpRequest], str | None]:
    """A reader for a header of its own (`X-API-Key: <value>`)."""

    def read(request: HttpRequest) -> str | None:
        value = request.headers.get(name)
        return value.strip() if value is not None else None

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
    if not usernames.is_possible(username):  # a NUL or a 5,000-character name never reaches a query
        _refuse(request, scheme="password", username=None, message="Invalid username or password.")
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
    username, password = credentials
    if api_keys.looks_like_key(password):
        lockout.refuse_if_locked(request, username)
        key = api_keys.find(password)
        if key is not None and key.user.get_username() == username and key.user.is_active:
            api_keys.touch(key)
            return api_keys.signed_in_with(key)
        # Not this user's key: checked as a password, so the miss counts toward the account like one.
    return verify_password(request, username, password)


def _refuse(request: HttpRequest, *, scheme: str, username: str | None, message: str = "Invalid key.") -> NoReturn:
    lockout.refuse_if_locked(request, username)  # a miss while locked is refused, not counted
    lockout.record_failure(request, scheme=scheme, username=username)
    lockout.refuse_if_locked(request, username)  # this miss may be the one that locks
    raise InvalidCredentials(message)


def _accept(request: HttpRequest, user: Any) -> Any:
    if not user.is_active:
        raise InvalidCredentials("User inactive or deleted.")
    lockout.refuse_if_locked(request, user.get_username())  # the owner's account, and the address
    return user


def verify_key(request: HttpRequest, key: str, *, scheme: str, owner: Callable[[str], Any]) -> Any:
    """The active owner of secret `key` (`owner` looks it up, None when unknown), under the lockout (module doc)."""
    user = owner(key) if key else None
    if user is None:
        _refuse(request, scheme=scheme, username=None)
    return _accept(request, user)


def verify_api_key(request: HttpRequest, raw: str, *, scheme: str = "api-key") -> Any:
    """The active owner of API key `raw` (`X-API-Key`, a key in the catalog URL), under the lockout."""
    key = api_keys.find(raw)
    if key is None:
        _refuse(request, scheme=scheme, username=None)
    _accept(request, key.user)
    api_keys.touch(key)
    return api_keys.signed_in_with(key)


def verify_kosync(request: HttpRequest, username: str, auth_key: str) -> Any:
    """The active user KOReader's sync headers name: `x-auth-user`, and `x-auth-key`, the MD5 of one of their keys.

    A miss counts toward the account `username` names, as a wrong password would; no headers at all is no attempt.
    """
    if not username and not auth_key:
        raise InvalidCredentials("No credentials.")
    possible = usernames.is_possible(username)  # else the miss counts toward the address alone
    key = api_keys.find_for_kosync(username, auth_key) if possible and auth_key else None
    if key is None:
        _refuse(request, scheme="kosync", username=username if possible else None)
    _accept(request, key.user)
    api_keys.touch(key)
    return api_keys.signed_in_with(key)


def token_owner(key: str) -> Any:
    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token is not None else None


def verify_token(request: HttpRequest, value: str) -> Any:
    return verify_key(request, value, scheme="token", owner=token_owner)


_schemes: list[HeaderScheme] = [
    HeaderScheme("Basic", authorization("Basic"), verify_basic),
    HeaderScheme("Token", authorization("Token"), verify_token),
    HeaderScheme("X-API-Key", header("X-API-Key"), verify_api_key),
]


def register_scheme(scheme: HeaderScheme) -> None:
    """Accept another header credential everywhere (idempotent by name; call it from an `AppConfig.ready()`)."""
    if all(existing.name != scheme.name for existing in _schemes):
        _schemes.append(scheme)


def header_user(request: HttpRequest) -> Any | None:
    """The user the request's header credentials prove, or None when it carries none; raises when they fail.

    A credential that passed moments ago is remembered (`accounts.remembered`): no query, no lockout read.
    """
    for scheme in _schemes:
        value = scheme.read(request)
        if value is not None:
            return _checked_once(request, scheme, value)
    return None


def _checked_once(request: HttpRequest, scheme: HeaderScheme, value: str) -> Any:
    key = remembered.credential_key(scheme.name, value)
    user = remembered.recall(key)
    if user is not None:
        return user
    with remembered.checking(key):
        user = remembered.recall(key)  # a concurrent request with this credential may have just passed
        if user is None:
            user = scheme.verify(request, value)
            remembered.remember(key, user)
    return user
