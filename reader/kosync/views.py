"""The kosync protocol (koreader/koreader-sync-server) over our users, API keys and read progress.

KOReader's sync plugin sends `x-auth-user` and `x-auth-key`, the MD5 of what
the user typed as the password: here, one of their API keys. A document is a
CBZ we served (see `documents`); its progress is the chapter's page, so the
same row the web reader, OPDS (`pse:lastRead`), the REST API and the Komga
API read and write. Errors keep the reference server's codes and statuses.
The headers are checked by the access policy (`accounts.credentials.verify_kosync`):
a wrong key counts toward the lockout of the account `x-auth-user` names, and
a locked account or address is refused with 429 and `Retry-After`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.throttling import SimpleRateThrottle

from accounts import api_keys, credentials, policy, usernames
from catalog import inputs
from reader.kosync import documents
from reader.kosync.protocol import (
    KosyncError,
    PageProgress,
    document_progress,
    page_from_report,
)
from reader.models import ReadProgress
from reader.progress import set_progress, stored_page_count

MEDIA_TYPE = "application/vnd.koreader.v1+json"

UNAUTHORIZED = KosyncError(401, 2001, "Unauthorized")
USER_EXISTS = KosyncError(402, 2002, "Username is already registered.")
INVALID = KosyncError(403, 2003, "Invalid request")
NO_DOCUMENT = KosyncError(403, 2004, "Field 'document' not provided.")
REGISTRATION_DISABLED = KosyncError(
    402, 2005, "User registration is disabled: ask the operator for an account and use an API key as the password."
)
TOO_MANY_REGISTRATIONS = KosyncError(429, 2005, "Too many registrations from this address: try again later.")
UNKNOWN_DOCUMENT = KosyncError(
    404, 2008, "Unknown document: download this chapter's CBZ from this server (OPDS or the web reader) and sync that."
)


def _json(status: int, body: dict[str, Any]) -> HttpResponse:
    return JsonResponse(body, status=status)


def _error(error: KosyncError) -> HttpResponse:
    return _json(error.status, {"code": error.code, "message": error.message})


def _body(request: HttpRequest) -> dict[str, Any]:
    try:  # size and nesting are checked before parsing (catalog.inputs): json.loads recurses once per level
        body = inputs.loads_bounded(request.body or b"{}")
    except inputs.BadJson as exc:
        raise INVALID from exc
    if not isinstance(body, dict):
        raise INVALID
    return body


class RegistrationThrottle(SimpleRateThrottle):
    """Registrations per client address (KOSYNC_REGISTRATION_THROTTLE), counted in the cache like the API's throttles."""

    scope = "kosync_register"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def sync_user(request: HttpRequest) -> Any:
    """The active user `x-auth-user`/`x-auth-key` name (the key is the MD5 of one of their API keys)."""
    try:
        return credentials.verify_kosync(
            request, request.headers.get("x-auth-user", ""), request.headers.get("x-auth-key", "")
        )
    except policy.InvalidCredentials as exc:
        raise UNAUTHORIZED from exc


def _locked_out(exc: policy.LockedOut) -> HttpResponse:
    response = _json(429, {"code": UNAUTHORIZED.code, "message": str(exc)})
    response["Retry-After"] = str(exc.retry_after_secs)
    return response


def kosync_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A kosync error raised in `view` becomes its JSON answer. No CSRF: KOReader signs each request by header."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except KosyncError as error:
            return _error(error)
        except policy.LockedOut as exc:
            return _locked_out(exc)

    return csrf_exempt(wrapper)


@kosync_view
@require_POST
def create_user(request: HttpRequest) -> HttpResponse:
    """KOReader's "Register" (off unless KOSYNC_ALLOW_REGISTRATION; docs/reading.md#koreader-progress-sync says why).

    Throttled per address; the name must be one Django's admin would accept
    and the key what KOReader sends (an MD5 in hex). A name already taken is
    said so, as KOReader expects: registering then signing in would tell that
    anyway, which is why the door is off by default. The key never decides
    the answer (`accounts.api_keys.mint_for_kosync`).
    """
    if not settings.KOSYNC_ALLOW_REGISTRATION:
        raise REGISTRATION_DISABLED
    if not RegistrationThrottle().allow_request(request, None):
        raise TOO_MANY_REGISTRATIONS
    body = _body(request)
    username, auth_key = body.get("username"), body.get("password")
    if not isinstance(username, str) or usernames.new_name_problem(username):
        raise INVALID
    if not isinstance(auth_key, str) or not documents.is_md5_hex(auth_key):
        raise INVALID
    users = get_user_model()
    try:
        with transaction.atomic():
            user = users._default_manager.create_user(username=username, password=None)
            api_keys.mint_for_kosync(user, auth_key)
    except IntegrityError as exc:
        raise USER_EXISTS from exc
    return _json(201, {"username": username})


@kosync_view
@require_GET
def auth_user(request: HttpRequest) -> HttpResponse:
    sync_user(request)
    return _json(200, {"authorized": "OK"})


@kosync_view
@require_http_methods(["PUT"])
def update_progress(request: HttpRequest) -> HttpResponse:
    user = sync_user(request)
    body = _body(request)
    document = body.get("document")
    if not isinstance(document, str) or not document:
        raise NO_DOCUMENT
    if not documents.is_md5_hex(document):
        raise INVALID
    chapter = documents.chapter_for(document)
    if chapter is None:
        raise UNKNOWN_DOCUMENT
    pages = stored_page_count(chapter)
    page = page_from_report(body.get("progress"), body.get("percentage"), pages)
    if page is None:
        raise INVALID
    progress = set_progress(user=user, chapter=chapter, last_page=page, completed=pages > 0 and page >= pages)
    return _json(200, {"document": document, "timestamp": int(progress.updated_at.timestamp())})


@kosync_view
@require_GET
def get_progress(request: HttpRequest, document: str) -> HttpResponse:
    user = sync_user(request)
    if not documents.is_md5_hex(document):
        raise INVALID
    chapter = documents.chapter_for(document)
    if chapter is None:
        return _json(200, {})
    row = ReadProgress.objects.filter(user=user, chapter=chapter).first()
    if row is None or row.last_page == 0:
        return _json(200, {})
    report = document_progress(document, PageProgress(row.last_page, stored_page_count(chapter), row.updated_at))
    return _json(200, report)


@require_GET
def healthcheck(request: HttpRequest) -> HttpResponse:
    return _json(200, {"state": "OK"})
