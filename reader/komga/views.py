"""The Komga API's views: parse (params), query (queries), shape (dto).

Access is the library's policy (`accounts.policy`) with a Basic challenge
(`accounts.drf.READER_APP_AUTHENTICATION`): HTTP Basic with a password or an
API key, `X-API-Key`, a browser session, all under the login lockout. Reads
follow `LIBRARY_PUBLIC_READ` (an anonymous reader sees no progress); read
progress, Mihon's tracker and `users/me` always need a user.

Errors: a bad parameter is a 400 in Komga's `ValidationErrorResponse` shape
naming it; an unknown id is a 404; anonymous callers get 401 with a Basic
challenge. The views stay out of our own OpenAPI document (Komga publishes
theirs).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.drf import READER_APP_AUTHENTICATION, CanReadLibrary
from catalog.api.inputs import BoundedJSONParser
from catalog.models import Chapter, Manga, Page, Source, Tag
from catalog.page_rows import page_of_chapter
from reader.komga import dto, params, queries, totals
from reader.komga.params import BadParam
from reader.komga.series import forget_series, lead, with_union_counts
from reader.models import ReadProgress
from reader.page_images import THUMBNAIL_WIDTH, cover_thumbnail_response, page_response
from reader.progress import forget_progress, mark_read, set_progress
from reader.source_settings import language, reading_direction


class JsonAlways(BaseContentNegotiation):
    """Komga answers JSON (or the image itself) whatever `Accept` says; Mihon asks pages with `Accept: image/*`."""

    def select_parser(self, request: Request, parsers: list[Any]) -> Any:
        return parsers[0]

    def select_renderer(self, request: Request, renderers: list[Any], format_suffix: str | None = None) -> Any:
        return renderers[0], renderers[0].media_type


class KomgaView(APIView):
    authentication_classes = READER_APP_AUTHENTICATION
    permission_classes = (CanReadLibrary,)
    renderer_classes = (JSONRenderer,)
    parser_classes = (BoundedJSONParser,)
    content_negotiation_class = JsonAlways
    schema = None

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, BadParam):
            return Response({"violations": [{"fieldName": exc.name, "message": exc.message}]}, status=400)
        return super().handle_exception(exc)


class KomgaUserView(KomgaView):
    """A call about the signed-in user (their progress, who they are): never anonymous."""

    permission_classes = (IsAuthenticated,)


def _sources() -> dict[str, Source]:
    return {s.id: s for s in Source.objects.all()}


def _series_json(request: Request, mangas: list[Manga]) -> list[dict[str, Any]]:
    sources = _sources()
    out = []
    for manga in mangas:
        source = sources.get(manga.library_id or "")
        url = request.build_absolute_uri(reverse("reader:manga", args=[manga.id]))
        out.append(dto.series(manga, language=language(source), direction=reading_direction(source), url=url))
    return out


def _book_json(request: Request, book: queries.Book) -> dict[str, Any]:
    return dto.book(book, url=request.build_absolute_uri(reverse("opds:cbz", args=[book.chapter.id])))


def _page_of(rows: QuerySet[Any] | list[Any], paging: params.Paging) -> tuple[list[Any], int]:
    if isinstance(rows, list):
        total = len(rows)
        return (rows if paging.unpaged else rows[paging.offset : paging.offset + paging.size]), total
    total = rows.count()
    return list(rows if paging.unpaged else rows[paging.offset : paging.offset + paging.size]), total


def _chapter(book_id: str) -> Chapter:
    try:
        return get_object_or_404(Chapter.objects.only("id", "manga_id"), pk=book_id, dropped_at__isnull=True)
    except ValidationError as exc:
        raise Http404("No such book.") from exc


class SeriesList(KomgaView):
    def get(self, request: Request) -> Response:
        wanted = params.series_filter(request.query_params)
        paging = params.paging(request.query_params)
        rows = queries.filtered_series(request.user, wanted).values_list("pk", flat=True)
        ids, total = totals.ids_and_total(rows, paging, plain=totals.is_plain(wanted))
        mangas = with_union_counts(request.user, queries.series_page(request.user, ids))
        return Response(dto.spring_page(_series_json(request, mangas), paging, total))


class SeriesDetail(KomgaView):
    """A series by its lead's id or any copy's: the series' data under the lead's id (reader.komga.series)."""

    def get(self, request: Request, series_id: str) -> Response:
        mangas = list(queries.series_rows(request.user).filter(pk=lead(series_id).pk))
        return Response(_series_json(request, with_union_counts(request.user, mangas))[0])


class SeriesBooks(KomgaView):
    def get(self, request: Request, series_id: str) -> Response:
        wanted = params.book_filter(request.query_params)
        paging = params.paging(request.query_params)
        books, total = queries.series_books_page(
            request.user, lead(series_id), wanted, paging.offset, None if paging.unpaged else paging.size
        )
        return Response(dto.spring_page([_book_json(request, b) for b in books], paging, total))


class SeriesThumbnail(KomgaView):
    def get(self, request: Request, series_id: str) -> HttpResponse:
        manga = lead(series_id)
        if manga.cover:
            return cover_thumbnail_response(request, manga.cover.name)
        first = Page.objects.filter(chapter__in=queries.shown_readable(manga)[:1]).order_by("index").first()
        if first is None:
            raise Http404("This series has no cover and no page yet.")
        return page_response(request, first, THUMBNAIL_WIDTH)


class BookDetail(KomgaView):
    def get(self, request: Request, book_id: str) -> Response:
        book = queries.one_book(request.user, _chapter(book_id).pk)
        if book is None:
            raise Http404("No such book.")
        return Response(_book_json(request, book))


def _pages(chapter: Chapter) -> list[Page]:
    return list(
        Page.objects.filter(chapter=chapter)
        .order_by("index")
        .only("id", "index", "image", "content_type", "width", "height", "bytes", "sha256")
    )


class BookPages(KomgaView):
    def get(self, request: Request, book_id: str) -> Response:
        pages = _pages(_chapter(book_id))
        return Response([dto.page(p, len(pages)) for p in pages])


class BookPage(KomgaView):
    def get(self, request: Request, book_id: str, number: int) -> HttpResponse:
        zero_based = params.boolean(request.query_params, "zero_based") is True
        target = request.query_params.get("convert")
        if target is not None and target not in ("png", "jpeg"):
            raise BadParam("convert", "must be png or jpeg")
        index = number if zero_based else number - 1
        # One statement when the page is there; otherwise the 404 says whether the book or the page is missing.
        page = page_of_chapter(book_id, index) or Page.objects.filter(chapter=_chapter(book_id), index=index).first()
        if page is None:
            raise Http404("No such page in this book.")
        return page_response(request, page, None, as_type=None if target is None else f"image/{target}")


class BookThumbnail(KomgaView):
    def get(self, request: Request, book_id: str) -> HttpResponse:
        page = Page.objects.filter(chapter=_chapter(book_id)).order_by("index").first()
        if page is None:
            raise Http404("This book has no page yet.")
        return page_response(request, page, THUMBNAIL_WIDTH)


class BookReadProgress(KomgaUserView):
    def patch(self, request: Request, book_id: str) -> Response:
        chapter = _chapter(book_id)
        body = request.data if isinstance(request.data, dict) else {}
        pages = Page.objects.filter(chapter=chapter).count()
        completed, page = body.get("completed"), body.get("page")
        if completed is not None and not isinstance(completed, bool):
            raise BadParam("completed", "must be true or false")
        if completed is True:
            set_progress(user=request.user, chapter=chapter, last_page=pages, completed=True)
            return Response(status=204)
        if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= max(pages, 1):
            raise BadParam("page", f"must be a page number from 1 to {pages}")
        set_progress(user=request.user, chapter=chapter, last_page=page, completed=pages > 0 and page >= pages)
        return Response(status=204)

    def delete(self, request: Request, book_id: str) -> Response:
        forget_progress(user=request.user, chapter=_chapter(book_id))
        return Response(status=204)


class TachiyomiProgress(KomgaUserView):
    """Mihon's Komga tracker: read how far the user got in a series, or mark everything up to a chapter read.

    A tracker counts the main story: extras (numbered apart, reader.komga.queries.number_sort) are neither
    counted here nor marked by a PUT.
    """

    def get(self, request: Request, series_id: str) -> Response:
        chapters = list(queries.shown_readable(lead(series_id)).filter(kind=Chapter.Kind.CHAPTER).only("id", "number"))
        rows = {r.chapter_id: r for r in ReadProgress.objects.filter(user=request.user, chapter__in=chapters)}
        completed = {i for i, c in enumerate(chapters) if c.id in rows and rows[c.id].completed}
        started = {i for i, c in enumerate(chapters) if c.id in rows and rows[c.id].last_page > 0}
        return Response(dto.tracker_progress([c.number for c in chapters], completed, started))

    def put(self, request: Request, series_id: str) -> Response:
        manga = lead(series_id)
        body = request.data if isinstance(request.data, dict) else {}
        if "lastBookNumberSortRead" not in body:
            raise BadParam("lastBookNumberSortRead", "is required")
        number = params.number_sort(body["lastBookNumberSortRead"])
        through = queries.shown_readable(manga).filter(kind=Chapter.Kind.CHAPTER, number__lte=number)
        mark_read(user=request.user, chapters=list(through))
        return Response(status=204)


class SeriesReadProgress(KomgaUserView):
    """Mark a whole series read (every book it shows, and their copies) or unread (every copy forgotten)."""

    def post(self, request: Request, series_id: str) -> Response:
        mark_read(user=request.user, chapters=list(queries.shown_readable(lead(series_id))))
        return Response(status=204)

    def delete(self, request: Request, series_id: str) -> Response:
        forget_series(request.user, lead(series_id))
        return Response(status=204)


class Libraries(KomgaView):
    def get(self, request: Request) -> Response:
        return Response([dto.library(s) for s in Source.objects.order_by("name", "id")])


class LibraryDetail(KomgaView):
    def get(self, request: Request, library_id: str) -> Response:
        return Response(dto.library(get_object_or_404(Source, pk=library_id)))


class Genres(KomgaView):
    def get(self, request: Request) -> Response:
        return Response(list(Tag.objects.order_by("name").values_list("name", flat=True)))


class NoValues(KomgaView):
    """Tags, publishers: Komga kinds of metadata this library has none of (our tags are Komga's genres)."""

    def get(self, request: Request) -> Response:
        return Response([])


def _author_names(search: str) -> list[str]:
    names: set[str] = set()
    for authors in Manga.objects.exclude(authors=[]).values_list("authors", flat=True).iterator():
        names.update(a for a in authors if isinstance(a, str) and a)
    needle = search.casefold()
    return sorted(n for n in names if needle in n.casefold())


class Authors(KomgaView):
    def get(self, request: Request) -> Response:
        names = _author_names(request.query_params.get("search", ""))
        return Response([{"name": n, "role": dto.WRITER} for n in names])


class AuthorsV2(KomgaView):
    def get(self, request: Request) -> Response:
        role = request.query_params.get("role", "")
        names = [] if role and role != dto.WRITER else _author_names(request.query_params.get("search", ""))
        paging = params.paging(request.query_params)
        shown, total = _page_of(names, paging)
        return Response(dto.spring_page([{"name": n, "role": dto.WRITER} for n in shown], paging, total))


class EmptyPage(KomgaView):
    """Collections and read lists: this library has none, as an empty page."""

    def get(self, request: Request) -> Response:
        return Response(dto.spring_page([], params.paging(request.query_params), 0))


class Me(KomgaUserView):
    """The signed-in user (Komelia and KMReader ask it right after login)."""

    def get(self, request: Request) -> Response:
        user = request.user
        # No ADMIN role even for staff: none of Komga's administration calls is answered here.
        roles = ["USER", "PAGE_STREAMING", "FILE_DOWNLOAD"]
        return Response(
            {
                "id": str(user.pk),
                "email": user.email or user.get_username(),
                "roles": roles,
                "sharedAllLibraries": True,
                "sharedLibrariesIds": [],
                "labelsAllow": [],
                "labelsExclude": [],
            }
        )
