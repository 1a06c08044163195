"""Guards for the admin crawler surface: `/api/v1/admin/`, `/admin/crawler/` and the job lists under `/admin/jobs/`.

Two rules on top of authentication, Django's CSRF check and the staff
permission (`admin_csrf_guard` and `admin_no_store_guard`), because these routes
change what the server fetches and show its queue and audit data:

- a mutation (any method but GET/HEAD/OPTIONS/TRACE) must come from an
  allowed origin: `ADMIN_ALLOWED_ORIGINS` when set, else the request's own
  host. The Origin header decides; Referer stands in when a client omits
  Origin. A request with neither is only accepted when it carries an
  `Authorization` or `X-API-Key` header: browsers send Origin on every cross-site POST and
  never attach either on their own, so header-token clients (scripts,
  `curl`) are not a CSRF vector while a cookie-only request without
  provenance is refused;
- every response carries `Cache-Control: no-store`, so status, job lists and
  audit data never land in a browser or proxy cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse

GUARDED_PREFIXES = ("/api/v1/admin/", "/admin/crawler/", "/admin/jobs/")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_guarded_path(path: str) -> bool:
    return path.startswith(GUARDED_PREFIXES)


def normalise_origin(value: str) -> str | None:
    """`scheme://host[:port]` in lower case with default ports dropped; None when unparsable."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    suffix = f":{port}" if port is not None and port != _DEFAULT_PORTS[parts.scheme] else ""
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{suffix}"


def _host_of(origin: str) -> str:
    """`host[:port]` of a normalised origin, in the form `request.get_host()` uses (IPv6 bracketed)."""
    return origin.split("://", 1)[1]


def is_origin_allowed(
    *,
    origin: str | None,
    referer: str | None,
    request_host: str | None,
    allowed_origins: Iterable[str],
    has_authorization: bool,
) -> bool:
    """Decide whether a mutation's provenance is acceptable (pure; see the module docstring)."""
    claimed = origin if origin else (referer or None)
    if claimed is None:
        return has_authorization
    source = normalise_origin(claimed)
    if source is None:  # "null" (sandboxed/opaque origins), garbage, non-http schemes
        return False
    allowed = {o for o in (normalise_origin(a) for a in allowed_origins) if o}
    if allowed:
        return source in allowed
    return request_host is not None and _host_of(source) == request_host.lower()


def _request_host(request: HttpRequest) -> str | None:
    try:
        return request.get_host()
    except DisallowedHost:
        return None


def check_request(request: HttpRequest) -> HttpResponse | None:
    """A refusal response for a cross-origin mutation, or None to let it through."""
    if request.method in SAFE_METHODS:
        return None
    allowed = is_origin_allowed(
        origin=request.META.get("HTTP_ORIGIN"),
        referer=request.META.get("HTTP_REFERER"),
        request_host=_request_host(request),
        allowed_origins=settings.ADMIN_ALLOWED_ORIGINS,
        has_authorization=bool(request.META.get("HTTP_AUTHORIZATION") or request.META.get("HTTP_X_API_KEY")),
    )
    if allowed:
        return None
    return JsonResponse(
        {"detail": "Cross-origin request refused: Origin/Referer is not an allowed admin origin."}, status=403
    )


def no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


class AdminGuardMiddleware:
    """Applies the origin rule and `no-store` to the guarded paths; other paths pass untouched.

    Sync and async capable, so the SSE stream under Daphne is not pushed
    through a thread hop by this middleware.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        if not is_guarded_path(request.path):
            return self.get_response(request)
        refusal = check_request(request)
        return no_store(refusal or self.get_response(request))

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if not is_guarded_path(request.path):
            return await self.get_response(request)
        refusal = check_request(request)
        return no_store(refusal or await self.get_response(request))
