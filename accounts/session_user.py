"""The signed-in user of a browser session, remembered for a burst the way a header credential is.

A web reader showing a chapter fetches its pages several at a time, each
with the session cookie, and Django answers each by reading the session row
and then the user row through the ORM (`ModelBackend.get_user`): the user
read was about a third of a page request. Here the session row is still
read on every request (`accounts.session_store`: a logout deletes it, an
expired one no longer matches), but the user is remembered in this process
for `remembered.BURST_SECS` under the session's backend and user id, and
the session's password hash is compared with the remembered user's on every
request, so a password change signs other sessions out as Django's own check
does. What forgets a remembered credential forgets this user too
(`accounts.signals`: any save of the user, a failed login anywhere).
"""

from __future__ import annotations

from typing import Any

from django.contrib import auth
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from accounts import remembered


def session_user(request: HttpRequest) -> Any:
    """The user `request`'s session is signed in as (AnonymousUser when none), its row read once a burst."""
    session = request.session
    user_id = session.get(auth.SESSION_KEY)
    backend_path = session.get(auth.BACKEND_SESSION_KEY)
    session_hash = session.get(auth.HASH_SESSION_KEY)
    if user_id is None or backend_path is None or not session_hash:
        return auth.get_user(request)
    key = remembered.credential_key("session", f"{backend_path}\0{user_id}")
    user = remembered.recall(key)
    if user is not None and constant_time_compare(session_hash, user.get_session_auth_hash()):
        return user
    # Django's whole check: the backend still listed, the row, the hash or its fallbacks (and the session
    # flushed when none matches).
    user = auth.get_user(request)
    if user.is_authenticated:
        remembered.remember(key, user)
    return user


class SessionUserMiddleware(AuthenticationMiddleware):
    """Django's authentication middleware with `request.user` from `session_user`."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _cached_user(request))  # type: ignore[assignment]


def _cached_user(request: HttpRequest) -> Any:
    if not hasattr(request, "_cached_user"):
        request._cached_user = session_user(request)  # type: ignore[attr-defined]
    return request._cached_user  # type: ignore[attr-defined]
