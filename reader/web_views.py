"""The web reader: server-rendered pages over the same queries and progress as OPDS.

Views only gather data; the listing queries live in reader.library, progress
rules in reader.progress, image scaling in reader.images.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.views import library_page
from catalog.bookmarks import create_bookmark
from catalog.models import Bookmark, Chapter, Manga, Page, Tag
from catalog.search import title_search
from reader import library as listings
from reader.http import BadParameter, bad_request, get_or_head, page_param
from reader.images import parse_width
from reader.naming import chapter_label, chapter_title
from reader.page_images import page_response
from reader.progress import continue_chapter, progress_by_chapter, readable_chapters, stored_pages
from reader.source_settings import reading_direction

LOGIN = "reader:login"
GRID_PAGE_SIZE = 24


def _page_or_400(request: HttpRequest) -> int | HttpResponse:
    try:
        return page_param(request)
    except BadParameter as exc:
        return bad_request(str(exc))


@get_or_head
@library_page(login_url=LOGIN)
def library(request: HttpRequest) -> HttpResponse:
    page_number = _page_or_400(request)
    if isinstance(page_number, HttpResponse):
        return page_number
    q = request.GET.get("q", "").strip()[:200]
    tag_name = request.GET.get("tag", "").strip()
    rows = listings.latest_mangas()
    if tag_name:
        rows = rows.filter(tags__name=tag_name)
    if q:
        rows = title_search(rows, q)  # best match first, as the API ranks it
    page = listings.paged(rows, page_number, GRID_PAGE_SIZE)
    context = {
        "page": page,
        "q": q,
        "tag": tag_name,
        "tags": list(Tag.objects.order_by("name").values_list("name", flat=True)[:200]),
    }
    return render(request, "reader/library.html", context)


@get_or_head
@library_page(login_url=LOGIN)
def manga_detail(request: HttpRequest, manga_id: str) -> HttpResponse:
    manga = get_object_or_404(Manga.objects.prefetch_related("tags"), pk=manga_id)
    chapters = list(
        Chapter.objects.filter(manga=manga, dropped_at__isnull=True)
        .annotate(stored_pages=stored_pages())
        .order_by("number", "created_at")
    )
    progress = progress_by_chapter(request.user, [c.id for c in chapters])
    rows = [
        {
            "chapter": c,
            "title": chapter_title(c.number, c.title),
            "readable": c.sync_state == Chapter.SyncState.DONE and c.stored_pages > 0,
            "progress": progress.get(c.id),
        }
        for c in chapters
    ]
    # An anonymous reader (LIBRARY_PUBLIC_READ) has no progress and no bookmarks.
    signed_in = request.user.is_authenticated
    resume = continue_chapter(request.user, manga) if signed_in else None
    context = {
        "manga": manga,
        "rows": rows,
        "bookmarked": signed_in
        and Bookmark.objects.filter(user=request.user, manga=manga, chapter__isnull=True).exists(),
        "resume": {"chapter": resume[0], "page": resume[1], "label": chapter_label(resume[0].number)}
        if resume
        else None,
    }
    return render(request, "reader/manga.html", context)


@require_POST
@login_required(login_url=LOGIN)
def bookmark_toggle(request: HttpRequest, manga_id: str) -> HttpResponse:
    manga = get_object_or_404(Manga, pk=manga_id)
    existing = Bookmark.objects.filter(user=request.user, manga=manga, chapter__isnull=True)
    if existing.exists():
        existing.delete()
    else:
        create_bookmark(user=request.user, manga=manga)
    return redirect("reader:manga", manga_id=manga.id)


@get_or_head
@library_page(login_url=LOGIN)
def chapter_reader(request: HttpRequest, chapter_id: str) -> HttpResponse:
    chapter = get_object_or_404(
        Chapter.objects.select_related("manga", "source"), pk=chapter_id, dropped_at__isnull=True
    )
    pages = list(Page.objects.filter(chapter=chapter).order_by("index").only("id", "width", "height"))
    if not pages:
        raise Http404("This chapter has no stored pages yet.")
    siblings = list(readable_chapters(chapter.manga).filter(~Q(pk=chapter.pk)).only("id", "number", "created_at"))
    before = [c for c in siblings if (c.number, c.created_at) < (chapter.number, chapter.created_at)]
    after = [c for c in siblings if (c.number, c.created_at) > (chapter.number, chapter.created_at)]
    progress = progress_by_chapter(request.user, [chapter.id]).get(chapter.id)
    data = {
        "chapter": str(chapter.id),
        "pageCount": len(pages),
        "lastPage": progress.last_page if progress else 0,
        "completed": bool(progress and progress.completed),
        "direction": reading_direction(chapter.source),
        "progressUrl": reverse("reader-api:progress-detail", args=[chapter.id])
        if request.user.is_authenticated
        else "",
        "previousUrl": reverse("reader:chapter", args=[before[-1].id]) if before else "",
        "nextUrl": reverse("reader:chapter", args=[after[0].id]) if after else "",
        "mangaUrl": reverse("reader:manga", args=[chapter.manga_id]),
        "pages": [
            {
                "width": p.width,
                "height": p.height,
                "full": reverse("catalog-api:page-image", args=[p.id]),
                "scaled": reverse("reader:page-image", args=[p.id]),
            }
            for p in pages
        ],
    }
    context = {"chapter": chapter, "title": chapter_title(chapter.number, chapter.title), "data": data}
    return render(request, "reader/chapter.html", context)


@get_or_head
@library_page(login_url=LOGIN)
def scaled_page(request: HttpRequest, page_id: str) -> HttpResponse:
    """A page at most `?w=` wide (the reader asks for its screen width), through the same downscaling as PSE."""
    page = get_object_or_404(Page.objects.only("id", "image", "content_type", "width", "sha256"), pk=page_id)
    try:
        width = parse_width(request.GET.get("w"))
    except ValueError as exc:
        return bad_request(f"w: {exc}")
    return page_response(request, page, width)
