"""Signed page URLs answered ahead of Django: the MAC checked, the file sent, no request cycle.

A signed URL (catalog/serving/signing.py) carries the permission decision a
view already took, so its answer needs none of Django's request cycle
(middleware, session, user: about 1.5 ms of CPU, most of a page's cost).
This ASGI wrapper answers `/signed/pages/...` (a web reader page: no
database at all, the file read on the event loop as nginx reads its files)
and `/signed/pse/...` (an OPDS-PSE page: the page found with one indexed
statement and the reader's progress moved forward with the one upsert, in a
worker thread), with the headers the one responder gives (catalog.serving:
`Cache-Control: private`, ETag and 304, Content-Length, ranges, 416, or
`X-Accel-Redirect`) and the security headers Django's middleware adds to an
image (nosniff, Referrer-Policy, Cross-Origin-Opener-Policy, X-Frame-Options,
HSTS over HTTPS). A disallowed Host is a 400, as in Django.

Only names the URL signed are opened, and only inside MEDIA_ROOT. Anything
else (another path, another method, signed URLs turned off, an HTTP request
Django would redirect to HTTPS) goes to the application unchanged.
"""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import parse_qs

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import IntegrityError, close_old_connections
from django.http import Http404
from django.http.request import split_domain_port, validate_host

from catalog.page_rows import stream_page
from catalog.serving.accel import accel_location
from catalog.serving.headers import (
    Unsatisfiable,
    answer_headers,
    byte_range,
    etag_matches,
    quoted_etag,
    range_applies,
    unsatisfiable_range,
)
from catalog.serving.signing import PAGE_PREFIX, PSE_PREFIX, Refused, SignedChapter, verify_page, verify_pse
from catalog.streaming import CHUNK_BYTES
from reader.images import parse_width, pse_type
from reader.opds_views import MAX_PAGES
from reader.page_images import page_copy
from reader.progress import record_page_read

SIGNED_PREFIX = "/signed/"
TEXT = "text/plain; charset=utf-8"


@dataclass
class Asked:
    """What of a request the answer depends on."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    secure: bool

    @classmethod
    def of(cls, scope: dict[str, Any]) -> Asked:
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", []):
            headers[name.decode("latin1").lower()] = value.decode("latin1")
        return cls(scope["method"], scope["path"], scope.get("query_string", b"").decode("latin1"), headers,
                   is_secure(scope, headers))  # fmt: skip


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    rest: IO[bytes] | None = None  # a long file's handle, positioned after `body`
    left: int = 0  # bytes of `rest` still to send


def is_secure(scope: dict[str, Any], headers: dict[str, str]) -> bool:
    """HTTPS, as Django's `request.is_secure()` decides it (SECURE_PROXY_SSL_HEADER)."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        header, value = proxy
        key = header.removeprefix("HTTP_").replace("_", "-").lower()
        if key in headers:
            return headers[key].split(",", 1)[0].strip() == value
    return scope.get("scheme") == "https"


def host_allowed(headers: dict[str, str]) -> bool:
    """Whether Django would accept the request's Host (ALLOWED_HOSTS; DEBUG's local names included)."""
    domain, _ = split_domain_port(headers.get("host", ""))
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def security_headers(secure: bool) -> list[tuple[str, str]]:
    """The headers Django's SecurityMiddleware and XFrameOptionsMiddleware add to an image answer."""
    headers = []
    if settings.SECURE_HSTS_SECONDS and secure:
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        value += "; includeSubDomains" if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS else ""
        value += "; preload" if settings.SECURE_HSTS_PRELOAD else ""
        headers.append(("Strict-Transport-Security", value))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    policy = settings.SECURE_REFERRER_POLICY
    if policy:
        values = [v.strip() for v in policy.split(",")] if isinstance(policy, str) else list(policy)
        headers.append(("Referrer-Policy", ",".join(values)))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    headers.append(("X-Frame-Options", getattr(settings, "X_FRAME_OPTIONS", "DENY").upper()))
    return headers


def media_path(name: str, root: str | os.PathLike[str]) -> str | None:
    """The file `name` names under `root` (MEDIA_ROOT), or None when it would be anywhere else."""
    base = os.path.abspath(root)
    full = os.path.abspath(os.path.join(base, name))
    return full if full != base and os.path.commonpath([base, full]) == base else None


def refusal(status: int) -> Answer:
    return Answer(
        status, [("Content-Type", TEXT)], {400: b"Bad request.\n", 403: b"Forbidden.\n"}.get(status, b"Not found.\n")
    )


def stored_answer(asked: Asked, name: str, content_type: str, etag: str) -> Answer:
    """The stored file `name`, answered as catalog.serving.responder answers it."""
    quoted = quoted_etag(etag)
    if etag_matches(asked.headers.get("if-none-match", ""), quoted):
        return Answer(304, answer_headers(quoted))
    location = accel_location(name, settings.SERVE_ACCEL_REDIRECT, default_storage)
    if location:
        return Answer(200, [("Content-Type", content_type), ("X-Accel-Redirect", location),
                            *answer_headers(quoted, ranges=False)])  # fmt: skip
    path = media_path(name, settings.MEDIA_ROOT)
    if path is None:
        return refusal(404)
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below, or once sent)
    except OSError:
        return refusal(404)
    try:
        return _file_answer(asked, handle, content_type, quoted)
    except BaseException:
        handle.close()
        raise


def _file_answer(asked: Asked, handle: IO[bytes], content_type: str, quoted: str) -> Answer:
    size = os.fstat(handle.fileno()).st_size
    wanted = None
    if range_applies(asked.headers.get("range", ""), asked.headers.get("if-range"), quoted):
        try:
            wanted = byte_range(asked.headers["range"], size)
        except Unsatisfiable:
            handle.close()
            headers = [("Content-Type", TEXT), ("Content-Range", unsatisfiable_range(size)), *answer_headers(quoted)]
            return Answer(416, headers)
    length = wanted.length if wanted is not None else size
    headers = [("Content-Type", content_type), ("Content-Length", str(length)), *answer_headers(quoted)]
    if wanted is not None:
        headers.append(("Content-Range", wanted.content_range))
        handle.seek(wanted.start)
    status = 206 if wanted is not None else 200
    if asked.method == "HEAD" or length <= CHUNK_BYTES:
        body = b"" if asked.method == "HEAD" else handle.read(length)
        handle.close()
        return Answer(status, headers, body)
    return Answer(status, headers, handle.read(CHUNK_BYTES), rest=handle, left=length - CHUNK_BYTES)


def page_answer(asked: Asked, now: float) -> Answer:
    """A web reader page: the signed name, its type and ETag from the URL alone. No database."""
    try:
        signed = verify_page(asked.path, settings.SERVE_SIGNING_KEY, now, nginx=settings.SERVE_SIGNED_BY_NGINX)
    except Refused as exc:
        return refusal(exc.status)
    return stored_answer(asked, signed.name, signed.content_type, signed.etag)


def pse_answer(asked: Asked, signed: SignedChapter) -> Answer:
    """An OPDS-PSE page, as reader.opds_views.page_stream answers it, for the user the URL was signed for: one
    statement finds the page, one upsert moves the progress (GET only)."""
    found = stream_page(signed.chapter, signed.number) if signed.number < MAX_PAGES else None
    if found is None:
        return refusal(404)
    try:
        max_width = parse_width(parse_qs(asked.query).get("maxWidth", [None])[-1])
    except ValueError as exc:
        return Answer(400, [("Content-Type", TEXT)], f"maxWidth: {exc}\n".encode())
    try:
        if asked.method == "GET":
            reader = get_user_model()(pk=signed.user)
            record_page_read(user=reader, chapter=found.chapter, page_number=signed.number + 1,
                             page_count=found.page_count)  # fmt: skip
        as_type = pse_type(t for t in (found.first_type, found.last_type) if t)
        name, content_type, etag = page_copy(found.page, max_width, as_type=as_type)
    except (Http404, IntegrityError):  # the page's file is gone; the user the URL was signed for is gone
        return refusal(404)
    return stored_answer(asked, name, content_type, etag)


def pse_in_thread(asked: Asked, signed: SignedChapter) -> Answer:
    """`pse_answer` in a worker thread, its database connection handled as Django's request cycle handles it."""
    close_old_connections()
    try:
        return pse_answer(asked, signed)
    finally:
        close_old_connections()


class SignedRoutes:
    """ASGI application: signed page URLs answered here (module doc), every other request passed to `app`."""

    def __init__(self, app: Any, pool: Executor) -> None:
        self.app = app
        self.pool = pool

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        asked = Asked.of(scope) if _signed_path(scope) else None
        if asked is None or (settings.SECURE_SSL_REDIRECT and not asked.secure):  # Django redirects it first
            await self.app(scope, receive, send)
            return
        while (message := await receive())["type"] == "http.request" and message.get("more_body"):
            pass  # a GET's body, if any, is not read
        await _send(send, await self._answer(asked), asked.secure)

    async def _answer(self, asked: Asked) -> Answer:
        if not host_allowed(asked.headers):
            return refusal(400)
        now = time.time()
        if asked.path.startswith(PAGE_PREFIX):
            return page_answer(asked, now)
        if asked.path.startswith(PSE_PREFIX):
            try:
                signed = verify_pse(asked.path, settings.SERVE_SIGNING_KEY, now)
            except Refused as exc:
                return refusal(exc.status)
            return await asyncio.get_running_loop().run_in_executor(self.pool, pse_in_thread, asked, signed)
        return refusal(404)


def _signed_path(scope: dict[str, Any]) -> bool:
    """A GET or HEAD of a signed path, signed URLs being on. Pure but for the setting."""
    return (
        scope["type"] == "http"
        and scope["path"].startswith(SIGNED_PREFIX)
        and scope["method"] in ("GET", "HEAD")
        and settings.SERVE_SIGNED_URLS
    )


async def _send(send: Any, answer: Answer, secure: bool) -> None:
    headers = [*answer.headers, *security_headers(secure)]
    if answer.rest is None and not any(name == "Content-Length" for name, _ in headers):  # as CommonMiddleware
        headers.append(("Content-Length", str(len(answer.body))))
    start = [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]
    await send({"type": "http.response.start", "status": answer.status, "headers": start})
    if answer.rest is None:
        await send({"type": "http.response.body", "body": answer.body, "more_body": False})
        return
    try:
        await send({"type": "http.response.body", "body": answer.body, "more_body": True})
        left = answer.left
        while left > 0:
            block = answer.rest.read(min(CHUNK_BYTES, left))  # page-cache reads, on the loop as nginx does them
            if not block:
                break  # a file cut short ends the body early
            left -= len(block)
            await send({"type": "http.response.body", "body": block, "more_body": left > 0})
        if left > 0:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        answer.rest.close()
