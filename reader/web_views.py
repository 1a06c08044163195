"""The web reader: server-rendered pages over the same queries and progress as OPDS.

Views only gather data; the listing queries live in reader.library, progress
rules in reader.progress, image scaling in reader.images.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_POST

from accounts.views import library_page
from catalog.bookmarks import create_bookmark, series_bookmarks
from catalog.models import Chapter, Manga, Page, Source, Tag
from catalog.page_rows import PAGE_FIELDS, page_by_id
from catalog.series_books import shown_chapters
from catalog.series_leads import is_merged, lead_of
from catalog.serving.signed_urls import signed_page_url
from reader import library as listings
from reader import shelves
from reader.chapter_list import chapter_counts, chapter_page, page_of
from reader.http import BadParameter, bad_request, get_or_head, page_param
from reader.images import COPY_WIDTHS, parse_width
from reader.library_query import SORTS, parse_library_query
from reader.naming import chapter_title
from reader.page_images import page_response
from reader.progress import (
    forget_progress,
    mark_read_through_chapter,
    progress_by_chapter,
    set_progress,
    stored_page_count,
)
from reader.reading_modes import default_mode
from reader.series_pages import neighbours, other_copies, readable_shown, resume_point, series_sources
from reader.source_settings import reading_direction, reading_mode
from reader.templatetags.reader_ui import library_link
from reader.theme import UnknownTheme, set_theme

LOGIN = "reader:login"
GRID_PAGE_SIZE = 24
NEXT_PRELOAD = 3
_ANY_ID = "00000000-0000-0000-0000-000000000000"
# The links of each chapter row on a manga page.
CHAPTER_LINKS = {
    "read": "reader:chapter",
    "mark": "reader:mark-chapter",
    "up_to": "reader:read-up-to",
    "cbz": "opds:cbz",
}


def url_for_each(route: str) -> Callable[[object], str]:
    """`route`'s URL for any id, reversed once: a 300-chapter page would otherwise reverse 1,200 times (most of
    its rendering time)."""
    template = reverse(route, args=[_ANY_ID])
    return lambda key: template.replace(_ANY_ID, str(key))


def bad_request_page(request: HttpRequest, message: str) -> HttpResponse:
    """A 400 in the library's own layout: what was wrong, and a way back."""
    return render(request, "reader/bad_request.html", {"message": message}, status=400)


@get_or_head
@library_page(login_url=LOGIN)
def library(request: HttpRequest) -> HttpResponse:
    sources = dict(Source.objects.order_by("name").values_list("id", "name"))
    try:
        query = parse_library_query(request.GET, sources=sources)
    except BadParameter as exc:
        return bad_request_page(request, str(exc))
    try:
        page = shelves.library_page(shelves.library_rows(query, request.user), query, GRID_PAGE_SIZE)
    except listings.BadCursor as exc:
        return bad_request_page(request, str(exc))
    shelves.attach_counts(page.rows, request.user)
    first_view = query.page == 1 and not query.filtered and not query.sort_chosen
    context = {
        "page": page,
        "query": query,
        "previous_link": library_link(query, page=page.page - 1, **page.previous_params),
        "next_link": library_link(query, page=page.page + 1, **page.next_params),
        "q": query.q,
        "sorts": SORTS,
        "statuses": Manga.Status.choices,
        "sources": sources,
        "tags": list(Tag.objects.order_by("name").values_list("name", flat=True)[:200]),
        "continue_reading": shelves.continue_reading(request.user) if first_view else [],
        "recently_updated": shelves.recently_updated(request.user) if first_view else [],
        "new_in_bookmarks": shelves.bookmarks_with_new_chapters(request.user) if first_view else [],
    }
    return render(request, "reader/library.html", context)


@get_or_head
@library_page(login_url=LOGIN)
def manga_detail(request: HttpRequest, manga_id: str) -> HttpResponse:
    """A series' page, under its lead's id: another source's copy sends the reader there."""
    manga = get_object_or_404(Manga.objects.prefetch_related("tags"), pk=manga_id)
    if not manga.leads_series and (lead := lead_of(manga)).pk != manga.pk:
        query = request.META.get("QUERY_STRING", "")
        return redirect(reverse("reader:manga", args=[lead.pk]) + (f"?{query}" if query else ""))
    try:
        page = page_param(request)
    except BadParameter as exc:
        return bad_request_page(request, str(exc))
    shown = shown_chapters(manga)  # the union, worked out once for the page
    chapters = chapter_page(shown, page)
    if page > 1 and not chapters.rows:
        raise Http404("This manga has fewer chapter pages.")
    progress = progress_by_chapter(request.user, [c.id for c in chapters.rows])
    links = {name: url_for_each(route) for name, route in CHAPTER_LINKS.items()}
    sources = series_sources(manga)
    # Rows name their source only when the series is read from several.
    source_names = {link.source_id: link.source.name for link in sources}
    several = len(source_names) > 1
    rows = [
        {
            "chapter": c,
            "title": chapter_title(c),
            "readable": c.sync_state == Chapter.SyncState.DONE and c.stored_pages > 0,
            "progress": progress.get(c.id),
            "urls": {name: link(c.id) for name, link in links.items()},
            "source": source_names.get(c.source_id, c.source_id) if several else "",
        }
        for c in chapters.rows
    ]
    # An anonymous reader (LIBRARY_PUBLIC_READ) has no progress and no bookmarks.
    signed_in = request.user.is_authenticated
    resume = resume_point(request.user, manga, shown) if signed_in else None
    context = {
        "manga": manga,
        "rows": rows,
        "counts": chapter_counts(request.user, manga),
        "chapter_page": chapters,
        "sources": sources,
        "bookmarked": signed_in and series_bookmarks(request.user, manga).exists(),
        "resume": {"chapter": resume[0], "page": resume[1], "title": chapter_title(resume[0])} if resume else None,
    }
    return render(request, "reader/manga.html", context)


def chapter_anchor(chapter: Chapter) -> str:
    """The series page (the chapter list's page that shows it) scrolled to `chapter`'s row."""
    lead = lead_of(chapter.manga)
    page = page_of(chapter, lead)
    query = f"?page={page}" if page > 1 else ""
    return reverse("reader:manga", args=[lead.pk]) + f"{query}#chapter-{chapter.id}"


@require_POST
@login_required(login_url=LOGIN)
def mark_chapter(request: HttpRequest, chapter_id: str) -> HttpResponse:
    """Mark one chapter read (at its last page) or unread (progress forgotten), then back to its manga."""
    chapter = get_object_or_404(Chapter.objects.select_related("manga"), pk=chapter_id, dropped_at__isnull=True)
    state = request.POST.get("state", "")
    if state == "read":
        set_progress(user=request.user, chapter=chapter, last_page=stored_page_count(chapter), completed=True)
    elif state == "unread":
        forget_progress(user=request.user, chapter=chapter)
    else:
        return bad_request_page(request, f"state={state!r} is not one we know: use read or unread")
    return redirect(chapter_anchor(chapter))


@require_POST
@login_required(login_url=LOGIN)
def mark_read_up_to(request: HttpRequest, chapter_id: str) -> HttpResponse:
    """This chapter and every readable one of its kind before it marked read (extras and main chapters apart)."""
    chapter = get_object_or_404(Chapter.objects.select_related("manga"), pk=chapter_id, dropped_at__isnull=True)
    lead = lead_of(chapter.manga)
    # A series read from several sources: every chapter its page shows before this one, whichever source.
    among = readable_shown(lead) if is_merged(lead) else None
    mark_read_through_chapter(user=request.user, chapter=chapter, among=among)
    return redirect(chapter_anchor(chapter))


@require_POST
@login_required(login_url=LOGIN)
def choose_theme(request: HttpRequest) -> HttpResponse:
    """Store the user's theme, then back to the page they were on (same host only)."""
    try:
        set_theme(request.user, request.POST.get("theme", ""))
    except UnknownTheme as exc:
        return bad_request_page(request, str(exc))
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = reverse("reader:library")
    return redirect(back)


@require_POST
@login_required(login_url=LOGIN)
def bookmark_toggle(request: HttpRequest, manga_id: str) -> HttpResponse:
    """Bookmark the series (whichever of its mangas is named), or remove the series' bookmark."""
    manga = get_object_or_404(Manga, pk=manga_id)
    existing = series_bookmarks(request.user, manga)
    if existing.exists():
        existing.delete()
    else:
        create_bookmark(user=request.user, manga=manga)
    return redirect("reader:manga", manga_id=lead_of(manga).pk)


# What a chapter page reads of its pages: their sizes, and what a signed URL of each names (catalog.serving).
_PAGE_URL_FIELDS = ("id", "width", "height", "image", "content_type", "sha256")


def _page_urls(page: Page, user: object) -> dict[str, object]:
    return {
        "width": page.width,
        "height": page.height,
        # The page as stored, served without Django's request cycle; the API's route where none is signed.
        "full": signed_page_url(page, user) or reverse("catalog-api:page-image", args=[page.id]),
        "scaled": reverse("reader:page-image", args=[page.id]),
    }


@get_or_head
@library_page(login_url=LOGIN)
@ensure_csrf_cookie  # the page has no form, but its progress PUTs carry the token
def chapter_reader(request: HttpRequest, chapter_id: str) -> HttpResponse:
    chapter = get_object_or_404(
        Chapter.objects.select_related("manga", "source"), pk=chapter_id, dropped_at__isnull=True
    )
    pages = list(Page.objects.filter(chapter=chapter).order_by("index").only(*_PAGE_URL_FIELDS))
    if not pages:
        raise Http404("This chapter has no stored pages yet.")
    lead = lead_of(chapter.manga)
    previous, following = neighbours(chapter, lead)
    # The next chapter's first pages, fetched while this one's last pages are read.
    next_pages = (
        list(Page.objects.filter(chapter=following).order_by("index").only(*_PAGE_URL_FIELDS)[:NEXT_PRELOAD])
        if following
        else []
    )
    progress = progress_by_chapter(request.user, [chapter.id]).get(chapter.id)
    title = chapter_title(chapter)
    data = {
        "chapter": str(chapter.id),
        "manga": str(chapter.manga_id),
        "title": title,
        "pageCount": len(pages),
        "lastPage": progress.last_page if progress else 0,
        "completed": bool(progress and progress.completed),
        "direction": reading_direction(chapter.source),
        "mode": default_mode(reading_mode(chapter.source), ((p.width, p.height) for p in pages)),
        "progressUrl": reverse("reader-api:progress-detail", args=[chapter.id])
        if request.user.is_authenticated
        else "",
        "previousUrl": reverse("reader:chapter", args=[previous.id]) if previous else "",
        "nextUrl": reverse("reader:chapter", args=[following.id]) if following else "",
        "nextTitle": chapter_title(following) if following else "",
        "nextPages": [_page_urls(p, request.user) for p in next_pages],
        "mangaUrl": reverse("reader:manga", args=[lead.pk]),
        "pages": [_page_urls(p, request.user) for p in pages],
        # The widths scaled copies are made at: the reader asks for one of them, the server keeps one copy each.
        "copyWidths": list(COPY_WIDTHS),
    }
    # The other sources' copies of this chapter, when the series has several ("Also from").
    copies = other_copies(chapter) if is_merged(lead) else []
    context = {"chapter": chapter, "series": lead, "title": title, "data": data, "copies": copies}
    return render(request, "reader/chapter.html", context)


@get_or_head
@library_page(login_url=LOGIN)
def scaled_page(request: HttpRequest, page_id: str) -> HttpResponse:
    """A page at most `?w=` wide (the reader asks for its screen width), through the same downscaling as PSE."""
    page = page_by_id(page_id) or get_object_or_404(Page.objects.only(*PAGE_FIELDS), pk=page_id)
    try:
        width = parse_width(request.GET.get("w"))
    except ValueError as exc:
        return bad_request(f"w: {exc}")
    return page_response(request, page, width)
