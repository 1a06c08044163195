"""`serve_stored`: the answer to every page, cover and thumbnail request, whichever reader asked.

One set of headers everywhere: `Cache-Control: private` (see `headers`),
the ETag and a 304 for a matching `If-None-Match` (nothing is opened),
Content-Length, `Accept-Ranges: bytes` with 206 for one byte range and 416
past the end. A file of one block or less is read in the view's own thread
and sent as one body: under ASGI a streamed body costs a thread hop per
block (catalog.streaming), and most pages fit one block. Larger files
stream block by block, from local storage and S3 alike. With
`SERVE_ACCEL_REDIRECT` the bytes are nginx's to send (`accel`).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified, StreamingHttpResponse

from catalog.serving.accel import configured_location
from catalog.serving.headers import (
    ByteRange,
    Unsatisfiable,
    answer_headers,
    byte_range,
    etag_matches,
    quoted_etag,
    range_applies,
    unsatisfiable_range,
)
from catalog.serving.opening import Body, open_body, stored_size
from catalog.streaming import CHUNK_BYTES, streamed


def serve_stored(request: HttpRequest, name: str, content_type: str, *, etag: str = "") -> HttpResponse:
    """The stored file `name` as `content_type` (module doc); 404 when nothing is stored under `name`.

    The caller has already decided that this request may read it.
    """
    quoted = quoted_etag(etag)
    if etag_matches(request.headers.get("If-None-Match", ""), quoted):
        return _finish(HttpResponseNotModified(), quoted)
    location = configured_location(name)
    if location:
        response = HttpResponse(content_type=content_type)
        response["X-Accel-Redirect"] = location
        return _finish(response, quoted, ranges=False)  # nginx serves the ranges and says so
    try:
        return _finish(_bytes(request, name, content_type, quoted), quoted)
    except (FileNotFoundError, OSError) as exc:
        raise Http404("The stored file is missing.") from exc


def _bytes(request: HttpRequest, name: str, content_type: str, quoted: str) -> HttpResponse:
    raw_range = request.headers.get("Range", "")
    if not range_applies(raw_range, request.headers.get("If-Range"), quoted):
        return _body_response(request, open_body(name), None, content_type)
    size = stored_size(name)
    try:
        wanted = byte_range(raw_range, size)
    except Unsatisfiable:
        response = HttpResponse(status=416, content_type="text/plain; charset=utf-8")
        response["Content-Range"] = unsatisfiable_range(size)
        return response
    return _body_response(request, open_body(name, wanted), wanted, content_type)


def _body_response(request: HttpRequest, body: Body, wanted: ByteRange | None, content_type: str) -> HttpResponse:
    length = wanted.length if wanted is not None else body.size
    response: HttpResponse | StreamingHttpResponse
    if length <= CHUNK_BYTES:
        try:
            response = HttpResponse(_read_exactly(body, length), content_type=content_type)
        finally:
            body.close()
    else:
        response = StreamingHttpResponse(streamed(request, _blocks(body, length)), content_type=content_type)
        response._resource_closers.append(body.close)  # type: ignore[attr-defined]  # closed with the response
    response["Content-Length"] = str(length)
    if wanted is not None:
        response.status_code = 206
        response["Content-Range"] = wanted.content_range
    return response  # type: ignore[return-value]  # a streamed answer is an HttpResponse to every caller


def _read_exactly(body: Body, length: int) -> bytes:
    return b"".join(_blocks(body, length))


def _blocks(body: Body, length: int) -> Iterator[bytes]:
    """Up to `length` bytes of `body` in blocks of CHUNK_BYTES; a file cut short ends the body early."""
    left = length
    while left > 0:
        block = body.handle.read(min(CHUNK_BYTES, left))
        if not block:
            return
        left -= len(block)
        yield block


def _finish(response: HttpResponse, quoted: str, *, ranges: bool = True) -> HttpResponse:
    for name, value in answer_headers(quoted, ranges=ranges):
        response[name] = value
    return response
