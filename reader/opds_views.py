"""OPDS 1.2 catalog under /opds/: navigation feeds, a series' acquisition feed, OpenSearch, PSE pages.

Every view reads only (GET/HEAD), needs an active user by HTTP Basic or
session (reader.auth), and pages its rows with typed first/previous/next
links: KOReader ignores paging links without a `type`.

A manga crawled from several sources is one entry, its series' lead
(catalog.series_leads), whose feed lists the series' chapters, each chapter
key once from the preferred copy (catalog.series_books). A copy's own URL
answers with its lead's feed, the same bytes: OPDS clients keep the links
they were given, some drop the credentials on a redirect, and a redirect
cached as permanent would outlive a split that makes the copy a series again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from django.db.models import CharField, Max, Min, OuterRef, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone

from catalog import chapter_order
from catalog.models import Chapter, Manga, Page, Tag
from catalog.page_rows import stream_page
from catalog.series_leads import lead_of
from catalog.serving.signed_urls import signed_stream_path
from reader import atom, library
from reader.atom import Entry, Feed, Link
from reader.auth import challenge, reader_required
from reader.http import BadParameter, bad_request, get_or_head, page_param
from reader.images import parse_width, pse_type
from reader.naming import chapter_title
from reader.page_images import cover_thumbnail_response, cover_type, page_response, thumbnail_type
from reader.progress import progress_by_chapter, record_page_read
from reader.source_settings import language

FEED_CACHE_CONTROL = "private, no-cache"
MAX_PAGES = 100_000  # no chapter has more; a bigger number would overflow the database's OFFSET


def _xml(body: bytes, content_type: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type};charset=utf-8")
    response["Cache-Control"] = FEED_CACHE_CONTROL
    return response


def opds_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET/HEAD, an active reader, and a 400 naming the parameter for bad paging/size input."""

    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParameter as exc:
            return bad_request(str(exc))

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return get_or_head(reader_required(wrapper))


def _abs(request: HttpRequest, name: str, *args: Any, query: dict[str, Any] | None = None) -> str:
    url = request.build_absolute_uri(reverse(f"opds:{name}", args=args))
    return f"{url}?{urlencode(query)}" if query else url


def _standard_links(request: HttpRequest, kind: str, self_url: str) -> list[Link]:
    return [
        Link(self_url, "self", kind),
        Link(_abs(request, "root"), "start", atom.NAVIGATION),
        Link(_abs(request, "opensearch"), "search", atom.OPENSEARCH_TYPE, "Search"),
    ]


def _paging_links(request: HttpRequest, page: library.Paged[Any], kind: str, extra: dict[str, str]) -> list[Link]:
    base = request.build_absolute_uri(request.path)

    def at(n: int, cursor: dict[str, str] | None = None) -> str:
        return f"{base}?{urlencode({**extra, 'page': n, **(cursor or {})})}"

    links = [Link(at(1), "first", kind, "First page")]
    if page.has_previous:
        links.append(Link(at(page.page - 1, page.previous_params), "previous", kind, "Previous page"))
    if page.has_next:
        links.append(Link(at(page.page + 1, page.next_params), "next", kind, "Next page"))
    return links


def _by_offset(request: HttpRequest, rows: Any) -> library.Paged[Any]:
    return library.paged(rows, page_param(request))


def _cursors(request: HttpRequest, decode: Callable[[str], Any]) -> tuple[Any, Any]:
    """The `after` and `before` cursors a feed's own next/previous links carry (one at a time), decoded."""
    try:
        after, before = (decode(request.GET[name]) if name in request.GET else None for name in ("after", "before"))
    except library.BadCursor as exc:
        raise BadParameter(str(exc)) from exc
    if after is not None and before is not None:
        raise BadParameter("give one cursor: `after` pages forward, `before` pages back")
    return after, before


def _seeking_by_title(request: HttpRequest, rows: Any) -> library.Paged[Manga]:
    """Title-ordered feeds follow the cursor their own next/previous links carry."""
    after, before = _cursors(request, library.TitleCursor.decode)
    return library.paged_by_title(rows, page_param(request), after=after, before=before)


def _seeking_by_latest(request: HttpRequest, rows: Any) -> library.Paged[Manga]:
    """The latest-update feed follows the cursor its own next/previous links carry."""
    after, before = _cursors(request, library.LatestCursor.decode)
    return library.paged_by_latest(rows, page_param(request), after=after, before=before)


def _cover_links(request: HttpRequest, manga: Manga) -> list[Link]:
    if not manga.cover:
        return []
    cover = request.build_absolute_uri(reverse("catalog-api:manga-cover", args=[manga.id]))
    return [
        Link(cover, atom.REL_IMAGE, cover_type(manga.cover.name)),
        Link(_abs(request, "thumbnail", manga.id), atom.REL_THUMBNAIL, thumbnail_type(manga.cover.name)),
    ]


def _manga_entry(request: HttpRequest, manga: Manga, note: str = "") -> Entry:
    content = note or manga.description[:300]
    return Entry(
        id=f"urn:uuid:{manga.id}",
        title=manga.title,
        updated=manga.latest_chapter_at or manga.updated_at,
        links=[Link(_abs(request, "manga", manga.id), "subsection", atom.ACQUISITION), *_cover_links(request, manga)],
        content=content or manga.title,
    )


def _manga_list_feed(
    request: HttpRequest,
    *,
    feed_id: str,
    title: str,
    rows: Any,
    extra: dict[str, str] | None = None,
    note: Callable[[Manga], str] = lambda m: "",
    pager: Callable[[HttpRequest, Any], library.Paged[Any]] = _by_offset,
) -> HttpResponse:
    page = pager(request, rows)
    self_url = request.build_absolute_uri()
    feed = Feed(
        id=feed_id,
        title=title,
        updated=atom.newest((m.latest_chapter_at or m.updated_at for m in page.rows), timezone.now()),
        links=[
            *_standard_links(request, atom.NAVIGATION, self_url),
            *_paging_links(request, page, atom.NAVIGATION, extra or {}),
        ],
        entries=[_manga_entry(request, m, note(m)) for m in page.rows],
    )
    return _xml(atom.render_feed(feed), atom.NAVIGATION)


def _nav_entry(
    request: HttpRequest, key: str, title: str, url: str, content: str, kind: str = atom.NAVIGATION
) -> Entry:
    return Entry(
        id=f"urn:mangalord:opds:{key}",
        title=title,
        updated=timezone.now(),
        links=[Link(url, "subsection", kind)],
        content=content,
    )


@opds_view
def root(request: HttpRequest) -> HttpResponse:
    """The start feed: where a client's catalog begins."""
    entries = [
        _nav_entry(
            request, "latest", "Latest updates", _abs(request, "latest"), "Mangas with the newest chapters first."
        ),
        _nav_entry(request, "all", "All mangas", _abs(request, "all"), "Every manga, by title."),
        _nav_entry(request, "bookmarks", "My bookmarks", _abs(request, "bookmarks"), "Your bookmarks, unread first."),
        _nav_entry(request, "tags", "Tags", _abs(request, "tags"), "Browse by tag."),
    ]
    feed = Feed(
        id="urn:mangalord:opds:root",
        title="Mangalord",
        updated=timezone.now(),
        links=_standard_links(request, atom.NAVIGATION, _abs(request, "root")),
        entries=entries,
    )
    return _xml(atom.render_feed(feed), atom.NAVIGATION)


@opds_view
def latest(request: HttpRequest) -> HttpResponse:
    return _manga_list_feed(
        request,
        feed_id="urn:mangalord:opds:latest",
        title="Latest updates",
        rows=library.latest_mangas(),
        pager=_seeking_by_latest,
    )


@opds_view
def all_mangas(request: HttpRequest) -> HttpResponse:
    return _manga_list_feed(
        request,
        feed_id="urn:mangalord:opds:all",
        title="All mangas",
        rows=library.mangas_by_title(),
        pager=_seeking_by_title,
    )


@opds_view
def bookmarks(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:  # an anonymous reader (LIBRARY_PUBLIC_READ) has none: ask who it is
        return challenge()
    return _manga_list_feed(
        request,
        feed_id="urn:mangalord:opds:bookmarks",
        title="My bookmarks",
        rows=library.bookmarked_mangas(request.user),
        note=lambda m: "New chapters to read." if m.unread else "All read.",
    )


@opds_view
def search(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()
    if not q or len(q) > 200:
        raise BadParameter("q must be 1 to 200 characters")
    return _manga_list_feed(
        request,
        feed_id=f"urn:mangalord:opds:search:{quote(q, safe='')}",  # a URI: no raw spaces
        title=f"Search: {q}",
        rows=library.search_mangas(q),
        extra={"q": q},
        pager=_seeking_by_title,
    )


@opds_view
def tag_list(request: HttpRequest) -> HttpResponse:
    page = library.paged(library.tags(), page_param(request))
    entries = [
        _nav_entry(request, f"tag:{t.id}", t.name, _abs(request, "tag", t.id), f"Mangas tagged {t.name}.")
        for t in page.rows
    ]
    feed = Feed(
        id="urn:mangalord:opds:tags",
        title="Tags",
        updated=timezone.now(),
        links=[
            *_standard_links(request, atom.NAVIGATION, request.build_absolute_uri()),
            *_paging_links(request, page, atom.NAVIGATION, {}),
        ],
        entries=entries,
    )
    return _xml(atom.render_feed(feed), atom.NAVIGATION)


@opds_view
def tag_feed(request: HttpRequest, tag_id: int) -> HttpResponse:
    tag = get_object_or_404(Tag, pk=tag_id)
    return _manga_list_feed(
        request,
        feed_id=f"urn:mangalord:opds:tag:{tag.id}",
        title=f"Tag: {tag.name}",
        rows=library.mangas_tagged(tag),
        pager=_seeking_by_title,
    )


@opds_view
def opensearch(request: HttpRequest) -> HttpResponse:
    template = _abs(request, "search") + "?q={searchTerms}"
    body = atom.render_opensearch(
        short_name="Mangalord", description="Search manga titles", template=template, feed_type=atom.NAVIGATION
    )
    return _xml(body, atom.OPENSEARCH_TYPE)


def _stored_type(pick: type[Min] | type[Max]) -> Subquery:
    rows = Page.objects.filter(chapter=OuterRef("pk")).order_by().values("chapter")
    return Subquery(rows.annotate(t=pick("content_type")).values("t"), output_field=CharField())


def with_stream_type(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    """Annotated with the lowest and highest stored page type: equal means every page shares it."""
    return chapters.annotate(first_type=_stored_type(Min), last_type=_stored_type(Max))


def stream_type(chapter: Chapter) -> str:
    """The type the chapter's PSE stream declares and serves every page as."""
    return pse_type(t for t in (chapter.first_type, chapter.last_type) if t)


def _chapter_entry(
    request: HttpRequest, manga: Manga, chapter: Chapter, tags: list[str], progress: Any, stream_type: str
) -> Entry:
    signed = signed_stream_path(chapter.id, request.user)  # read without a session or a password check
    stream = request.build_absolute_uri(signed) if signed else _abs(request, "page", chapter.id, 0)[: -len("0/")]
    pages = stream + "{pageNumber}/?maxWidth={maxWidth}"
    pse = atom.pse_attributes(
        chapter.stored_pages, progress.last_page if progress else 0, progress.updated_at if progress else None
    )
    return Entry(
        id=f"urn:uuid:{chapter.id}",
        title=chapter_title(chapter),
        updated=chapter.updated_at,
        authors=list(manga.authors) or ["Unknown"],
        categories=tags,
        language=language(chapter.source),
        issued=chapter.published_at.date().isoformat() if chapter.published_at else "",
        summary=manga.description,
        content=f"From {chapter.source.name}.",  # a series' chapters may come from several sources
        links=[
            Link(_abs(request, "cbz", chapter.id), atom.REL_ACQUISITION, atom.CBZ_TYPE, "Download CBZ"),
            Link(pages, atom.REL_PSE_STREAM, stream_type, "Read", extra=pse),
            *_cover_links(request, manga),
        ],
    )


@opds_view
def manga_feed(request: HttpRequest, manga_id: str) -> HttpResponse:
    """Acquisition feed of a series: one entry per readable chapter key, in reading order (extras after the main
    chapters), paged; a copy's id answers with its lead's feed."""
    manga = lead_of(get_object_or_404(Manga, pk=manga_id))
    chapters = with_stream_type(library.readable_shown(manga).select_related("source"))
    try:  # a long series pages by cursors in reading order (catalog.chapter_order), as the chapter list reads
        page = library.paged_by_keys(
            chapters.annotate(volume_order=chapter_order.VOLUME_ORDER),
            page_param(request),
            chapter_order.CURSOR_KEYS,
            after=request.GET.get("after"),
            before=request.GET.get("before"),
            annotated=chapter_order.CURSOR_FIELDS,
        )
    except library.BadCursor as exc:
        raise BadParameter(str(exc)) from exc
    progress = progress_by_chapter(request.user, [c.id for c in page.rows])
    tags = list(
        Tag.objects.filter(mangas__series_id=manga.series_id).order_by("name").distinct().values_list("name", flat=True)
    )
    self_url = request.build_absolute_uri()
    links = [
        *_standard_links(request, atom.ACQUISITION, self_url),
        Link(_abs(request, "latest"), "up", atom.NAVIGATION),
        *_paging_links(request, page, atom.ACQUISITION, {}),
        *_cover_links(request, manga),
    ]
    feed = Feed(
        id=f"urn:uuid:{manga.id}",
        title=manga.title,
        subtitle=manga.description,
        updated=atom.newest((c.updated_at for c in page.rows), manga.updated_at),
        links=links,
        entries=[_chapter_entry(request, manga, c, tags, progress.get(c.id), stream_type(c)) for c in page.rows],
    )
    return _xml(atom.render_feed(feed), atom.ACQUISITION)


@get_or_head
@reader_required
def page_stream(request: HttpRequest, chapter_id: str, number: int) -> HttpResponse:
    """PSE page `number` (0-based), optionally at most `maxWidth` wide, in the type the chapter's stream link
    declares; moves the reader's progress forward."""
    if number >= MAX_PAGES:
        raise Http404("No such page in this chapter.")
    found = stream_page(chapter_id, number)  # one statement: the page, the chapter's types and its page count
    if found is None:  # no such chapter (404), or no such page once maxWidth is known good
        get_object_or_404(Chapter.objects.only("id"), pk=chapter_id, dropped_at__isnull=True)
    try:
        max_width = parse_width(request.GET.get("maxWidth"))
    except ValueError as exc:
        return bad_request(f"maxWidth: {exc}")
    if found is None:
        raise Http404("No such page in this chapter.")
    if request.method == "GET" and request.user.is_authenticated:
        record_page_read(user=request.user, chapter=found.chapter, page_number=number + 1, page_count=found.page_count)
    as_type = pse_type(t for t in (found.first_type, found.last_type) if t)
    return page_response(request, found.page, max_width, as_type=as_type)


@get_or_head
@reader_required
def thumbnail(request: HttpRequest, manga_id: str) -> HttpResponse:
    manga = get_object_or_404(Manga.objects.only("id", "cover"), pk=manga_id)
    if not manga.cover:
        raise Http404("This manga has no stored cover.")
    return cover_thumbnail_response(request, manga.cover.name)
