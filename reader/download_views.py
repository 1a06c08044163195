"""GET a chapter as CBZ: streamed, with a Content-Length when every page's size is known.

A chapter of a copy merged into a series is named, and its ComicInfo filled, after the series (its lead's
title), as the OPDS feed that links it and the export name it.
"""

from __future__ import annotations

from urllib.parse import quote

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from catalog.models import Chapter
from catalog.streaming import streamed
from reader.atom import CBZ_TYPE
from reader.auth import reader_required
from reader.cbz import chapter_zip, series_facts
from reader.http import get_or_head
from reader.kosync.documents import recording_binary_digest, remember_filename
from reader.naming import cbz_filename


@get_or_head
@reader_required
def chapter_cbz(request: HttpRequest, chapter_id: str) -> HttpResponse:
    chapter = get_object_or_404(
        Chapter.objects.select_related("manga", "source"),
        pk=chapter_id,
        dropped_at__isnull=True,
    )
    series = series_facts(chapter.manga)
    archive = chapter_zip(chapter, series)
    name = cbz_filename(series.title, chapter.number, chapter.title, kind=chapter.kind, volume=chapter.volume)
    body = archive if request.method == "HEAD" else recording_binary_digest(archive, chapter)
    response = StreamingHttpResponse(streamed(request, body), content_type=CBZ_TYPE)
    if archive.sized:
        response["Content-Length"] = str(len(archive))
    if request.method != "HEAD":
        remember_filename(name, chapter)
    response["Content-Disposition"] = f"attachment; filename*=UTF-8''{quote(name, safe='')}"
    response["Cache-Control"] = "private, no-cache"
    return response
