"""The access policy: who may read the library, and who a request is. One object for every reader protocol.

The library API, page images, covers, OPDS, CBZ downloads and the web reader
all ask this module, and so does any protocol added later: a request is
identified by its browser session or its header credentials
(`accounts.credentials`: Basic with a password or an API key, Token,
`X-API-Key`, any registered scheme, each under the login lockout), and the library may be read by an active user, or by
anyone when the operator opened it on purpose (`LIBRARY_PUBLIC_READ`, off
by default: whoever reaches the web process then reads every manga, page
and OCR text, with no account). Per-user things (bookmarks, read progress)
always need a user.

A protocol that builds on Django views calls `library_reader(request)`; one
built on DRF uses `accounts.drf.API_AUTHENTICATION` and `CanReadLibrary`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest

from accounts.credentials import InvalidCredentials, header_user
from accounts.lockout import LockedOut

__all__ = ["InvalidCredentials", "LockedOut", "NotAllowed", "identify", "library_reader", "may_read_library"]


class NotAllowed(Exception):
    """No user, and the library is not open to anonymous readers: the caller asks for credentials."""


def is_active_user(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def may_read_library(user: Any) -> bool:
    """An active user may read; anyone may while `LIBRARY_PUBLIC_READ` is on."""
    return is_active_user(user) or settings.LIBRARY_PUBLIC_READ


def identify(request: HttpRequest) -> Any | None:
    """The active user behind the session, else behind the header credentials, else None (anonymous).

    Raises `InvalidCredentials` or `LockedOut` when header credentials were given and are refused.
    """
    user = getattr(request, "user", None)
    if is_active_user(user):
        return user
    return header_user(request)


def library_reader(request: HttpRequest) -> Any:
    """Who reads the library in this request: the identified user, or AnonymousUser while reads are public.

    Raises `NotAllowed` (ask for credentials), `InvalidCredentials` or `LockedOut`.
    """
    user = identify(request)
    if user is not None:
        return user
    if settings.LIBRARY_PUBLIC_READ:
        return AnonymousUser()
    raise NotAllowed("Authentication required.")
