"""The live status stream: `GET /api/v1/admin/crawler/stream/` as Server-Sent Events.

Every dashboard tab holds one stream. Each is a subscription to the process's
one `StatusBroadcaster` (`console.dashboard.broadcaster`), which composes the
status once per change for all of them; this module authenticates the
request and writes the broadcaster's snapshots, with keep-alives, until the
client goes away or its session is revoked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse

from accounts import credentials
from accounts.lockout import LockedOut
from console.control.operators import can_watch
from console.dashboard.broadcaster import Snapshot, StatusBroadcaster, Subscription, get_broadcaster

# Browsers reconnect this long after a stream ends (the SSE `retry:` field).
RECONNECT_MS = 1000


def sse_event(snapshot: Snapshot) -> str:
    return f"id: {snapshot.version}\nevent: status\ndata: {snapshot.data}\n\n"


KEEP_ALIVE = ": keep-alive\n\n"


async def sse_events(sub: Subscription, keepalive: float) -> AsyncIterator[str]:
    """The stream body: the current status, then every new one, with keep-alives when idle.

    Runs until the client goes away (Django cancels the response task and
    closes this generator; `finally` unsubscribes) or the session is revoked.
    """
    try:
        yield f"retry: {RECONNECT_MS}\n\n"
        seen = 0
        while not sub.revoked:
            snapshot = await sub.next(seen, keepalive)
            if sub.revoked:
                break
            if snapshot is None:
                yield KEEP_ALIVE
            else:
                seen = snapshot.version
                yield sse_event(snapshot)
    finally:
        sub.close()


async def status_stream(request: HttpRequest, broadcaster: StatusBroadcaster | None = None) -> HttpResponse:
    """`GET /api/v1/admin/crawler/stream/`: the composed crawler status as Server-Sent Events (staff only)."""
    try:
        user = await _authenticate(request)
    except credentials.InvalidCredentials as exc:
        return _no_store(JsonResponse({"detail": str(exc)}, status=401))
    except LockedOut as exc:
        response = JsonResponse({"detail": str(exc)}, status=429)
        response["Retry-After"] = str(exc.retry_after_secs)
        return _no_store(response)
    if not user.is_authenticated:
        return _no_store(JsonResponse({"detail": "Authentication credentials were not provided."}, status=401))
    if not await sync_to_async(can_watch)(user):
        return _no_store(JsonResponse({"detail": "Staff only."}, status=403))
    if request.method != "GET":
        return _no_store(JsonResponse({"detail": f'Method "{request.method}" not allowed.'}, status=405))
    # The login lookups above ran in this request's worker thread, whose
    # connection would otherwise stay open for the life of the stream: one
    # idle database connection per dashboard tab.
    await sync_to_async(connections.close_all)()
    sub = (broadcaster or get_broadcaster()).subscribe(session_key=request.session.session_key)
    response = StreamingHttpResponse(
        sse_events(sub, settings.CRAWLER_STREAM_KEEPALIVE_SECS), content_type="text/event-stream"
    )
    # Proxies must neither cache nor buffer a live stream.
    response["X-Accel-Buffering"] = "no"
    return _no_store(response)


async def _authenticate(request: HttpRequest) -> Any:
    """The header credentials' user for scripts (as on every admin endpoint), else the session user."""
    found = await sync_to_async(credentials.header_user)(request)  # None without header credentials
    if found is not None:
        return found
    return await request.auser()


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response
