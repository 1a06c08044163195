"""Streamed responses that stay streamed under ASGI (Daphne), the production web server, as under WSGI.

Django's ASGI handler cannot iterate a synchronous iterator from its event
loop, so `StreamingHttpResponse.__aiter__` reads a plain iterator (an open
file, a lazily built zip) into one list before sending its first byte: a
500 MB CBZ would sit whole in the web process. Under ASGI the body is
therefore handed over as an async iterator that pulls one chunk at a time
from the synchronous one. Each pull runs thread-sensitively, in the
request's own sync thread, where the view opened its files and database
connection, so iterators that touch the database at the end (the CBZ's
KOReader digest) behave as under WSGI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import IO, Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, HttpRequest

# A file is read in blocks this large (FileResponse's own 4 KiB would cost a thread hop per 4 KiB under ASGI).
CHUNK_BYTES = 256 * 1024

_END = object()


def streamed(request: HttpRequest | Any, chunks: Iterable[bytes]) -> Iterable[bytes] | AsyncIterator[bytes]:
    """`chunks` as the body of a streaming response to `request`: pulled chunk by chunk under ASGI as well."""
    if isinstance(getattr(request, "_request", request), ASGIRequest):  # a DRF Request wraps Django's
        return _pulled(iter(chunks))
    return chunks


async def _pulled(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    pull = sync_to_async(next, thread_sensitive=True)
    while (chunk := await pull(chunks, _END)) is not _END:  # type: ignore[call-arg]  # next() with a default
        yield chunk  # type: ignore[misc]


class _BlockFileResponse(FileResponse):
    block_size = CHUNK_BYTES


def file_response(request: HttpRequest | Any, handle: IO[bytes], content_type: str) -> FileResponse:
    """A FileResponse for an open stored file (headers from the file as Django sets them), streamed under ASGI too.

    The handle stays among the response's closers, so it is closed when the
    server is done, whether the body was sent whole, cut short or skipped (HEAD).
    """
    response = _BlockFileResponse(handle, content_type=content_type)
    if isinstance(getattr(request, "_request", request), ASGIRequest):
        response.streaming_content = _pulled(iter(lambda: handle.read(CHUNK_BYTES), b""))
    return response
