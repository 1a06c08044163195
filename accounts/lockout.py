"""Login lockout: repeated failures for one account, or from one address, refuse every login for a while.

django-axes counts the failures: every `django.contrib.auth.authenticate()`
that fails (the login forms, HTTP Basic, the token endpoint) sends
`user_login_failed`, which axes records per (username, address); its
authentication backend, first in `AUTHENTICATION_BACKENDS`, refuses every
attempt (the right password too) while the request is locked. Keys report
their misses here (`record_failure`): toward the account they name (KOReader
sync's user) and the address, or the address alone when they name none (API
tokens, `X-API-Key`, a key in a URL).

Two limits instead of axes' one (`LoginLockoutHandler`): an account locks
after `LOGIN_FAILURE_LIMIT` failures, whatever address they came from (a
guesser spread over many addresses), while an address locks only after
`LOGIN_ADDRESS_FAILURE_LIMIT`, so one member of a household behind one NAT
address mistyping a password does not lock the others out, but a guesser
trying many accounts from one address is stopped. Failures count for
`LOGIN_LOCKOUT_MINUTES` after the last one; failures while locked are not
counted, so a lockout ends that long after the last counted failure.
"""

from __future__ import annotations

import math
from typing import Any

from asgiref.sync import sync_to_async
from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_cool_off, get_lockout_response
from axes.middleware import AxesMiddleware
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.db.models import Q, Sum
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from accounts import usernames


class LockedOut(Exception):
    """Too many failed logins for this account or from this address; nothing is checked until it passes."""

    def __init__(self, retry_after_secs: int) -> None:
        self.retry_after_secs = retry_after_secs
        minutes = max(1, math.ceil(retry_after_secs / 60))
        super().__init__(f"Too many failed logins: locked for up to {minutes} minute(s). Try again later.")


def failures_toward_lockout(account: int, address: int, *, account_limit: int, address_limit: int) -> int:
    """The failure count axes compares with the account limit: the account's own, or the address's, shifted.

    Locked iff `account >= account_limit` or `address >= address_limit`: the
    address's failures count only from `address_limit - account_limit` on, so
    reaching `address_limit` reaches the account limit. Pure; see the module doc.
    """
    return max(account, address - (address_limit - account_limit))


class LoginLockoutHandler(AxesDatabaseHandler):
    """axes' database handler with a per-account and a per-address limit (see the module doc).

    Both counts come from one query: every HTTP Basic request (a streamed
    OPDS page) checks the lockout. `AXES_LOCKOUT_PARAMETERS = ["username",
    "ip_address"]` keeps axes' own bookkeeping (resets, its admin) per account
    and per address alike.
    """

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        username = get_client_username(request, credentials)
        address = request.axes_ip_address
        # A key without a username (an API token) counts toward the address only:
        # every such attempt shares the empty username.
        mine = Q(username=username) if username else Q(pk__in=[])
        counts = AccessAttempt.objects.filter(
            mine | Q(ip_address=address), attempt_time__gte=get_cool_off_threshold(request)
        ).aggregate(
            account=Sum("failures_since_start", filter=mine),
            address=Sum("failures_since_start", filter=Q(ip_address=address)),
        )
        return failures_toward_lockout(
            counts["account"] or 0,
            counts["address"] or 0,
            account_limit=settings.AXES_FAILURE_LIMIT,
            address_limit=settings.LOGIN_ADDRESS_FAILURE_LIMIT,
        )


def lockout_username(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str | None:
    """The account a failure counts toward (axes' `AXES_USERNAME_CALLABLE`): the name the attempt gave, when some
    account could have it (`accounts.usernames`), else None, so the failure counts toward the address alone.

    axes stores this name in 255 characters and PostgreSQL refuses a NUL: a hostile name is never written.
    """
    if credentials:
        name = credentials.get(settings.AXES_USERNAME_FORM_FIELD)
    else:
        name = getattr(request, "data", request.POST).get(settings.AXES_USERNAME_FORM_FIELD)
    return name if isinstance(name, str) and usernames.is_possible(name) else None


def lockout_secs() -> int:
    cool_off = get_cool_off()
    return int(cool_off.total_seconds()) if cool_off else 0


def refuse_if_locked(request: HttpRequest, username: str | None) -> None:
    """Raise `LockedOut` while `username` (None: a key without one) or the request's address is locked."""
    if not settings.AXES_ENABLED:
        return
    if AxesProxyHandler.is_locked(request, {"username": username} if username else None):
        raise LockedOut(lockout_secs())


def record_failure(request: HttpRequest, *, scheme: str, username: str | None = None) -> None:
    """Count a wrong key (token, API key) as a wrong password is counted: toward `username`'s account, if the
    credential names one (kosync's user), and the request's address."""
    user_login_failed.send(sender=__name__, credentials={"username": username, "scheme": scheme}, request=request)


def unlock(*, username: str | None = None, address: str | None = None) -> int:
    """Forget the failures of an account and/or an address (the admin action, `axes_reset_username`); how many rows."""
    forgotten = 0
    if username:
        forgotten += AxesProxyHandler.reset_attempts(username=username)
    if address:
        forgotten += AxesProxyHandler.reset_attempts(ip_address=address)
    return forgotten


def lockout_response(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """What a locked-out login form answers (axes' `AXES_LOCKOUT_CALLABLE`): 429, Retry-After, a page saying so.

    A view that already answered the lockout itself (the API's JSON, OPDS's plain text) keeps its answer.
    """
    if original_response is not None and original_response.status_code == 429:
        return original_response
    error = LockedOut(lockout_secs())
    body = render_to_string("accounts/locked_out.html", {"message": str(error)}, request=request)
    response = HttpResponse(body, status=429)
    response["Retry-After"] = str(error.retry_after_secs)
    return response


class LockoutMiddleware(AxesMiddleware):
    """axes' middleware, its ASGI branch handing `lockout_response` the view's response as its WSGI branch does.

    django-axes 8.3.1's `__acall__` passes the credentials where the response belongs, so under Daphne the
    failure that locks an account was a 500 (jazzband/django-axes#1494) instead of the view's own 429.
    """

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        if settings.AXES_ENABLED and getattr(request, "axes_locked_out", None):
            credentials = getattr(request, "axes_credentials", None)
            response = await sync_to_async(get_lockout_response, thread_sensitive=True)(request, response, credentials)
        return response
