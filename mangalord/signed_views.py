"""Signed page URLs answered by Django, for a server that does not run the lean handler in front of it.

The web process answers `/signed/...` before Django sees it
(mangalord/signed_routes.py). Under another server (WSGI, the test
suite's live server) or with the handler passing a request on, the same
URLs still open the same pages through this view, from the same functions:
slower, never different. With `SERVE_SIGNED_URLS` off they open nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, StreamingHttpResponse

from catalog.serving.signing import PSE_PREFIX, Refused, verify_pse
from catalog.streaming import CHUNK_BYTES, streamed
from mangalord.signed_routes import Answer, Asked, page_answer, pse_answer, refusal


def signed(request: HttpRequest, rest: str) -> HttpResponse:
    if not settings.SERVE_SIGNED_URLS:
        raise Http404("No such page.")
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    headers = {name.lower(): value for name, value in request.headers.items()}
    asked = Asked(request.method, request.path_info, request.META.get("QUERY_STRING", ""), headers, request.is_secure())
    now = time.time()
    if asked.path.startswith(PSE_PREFIX):
        try:
            answer = pse_answer(asked, verify_pse(asked.path, settings.SERVE_SIGNING_KEY, now))
        except Refused as exc:
            answer = refusal(exc.status)
    else:
        answer = page_answer(asked, now)
    return _response(request, answer)


def _response(request: HttpRequest, answer: Answer) -> HttpResponse:
    response: HttpResponse | StreamingHttpResponse
    if answer.rest is None:
        response = HttpResponse(answer.body, status=answer.status)
    else:
        response = StreamingHttpResponse(streamed(request, _blocks(answer)), status=answer.status)
        response._resource_closers.append(answer.rest.close)  # type: ignore[attr-defined]  # closed with the response
    if answer.status == 304:
        del response["Content-Type"]
    for name, value in answer.headers:
        response[name] = value
    return response  # type: ignore[return-value]  # a streamed answer is an HttpResponse to every caller


def _blocks(answer: Answer) -> Iterator[bytes]:
    yield answer.body
    left = answer.left
    while left > 0 and answer.rest is not None:
        block = answer.rest.read(min(CHUNK_BYTES, left))
        if not block:
            return
        left -= len(block)
        yield block
