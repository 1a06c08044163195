"""Settings presets for the WordPress manga theme families: `{"preset": "madara"}` and friends.

Each preset is the theme's stock markup and endpoints, as the theme ships
them (and as the long-maintained multi-source scrapers for these themes
describe them): list URL and paging, item/next selectors, detail fields,
chapter list (Madara's ajax flow with its old/new endpoint switch), page list
(MangaThemesia's inline `ts_reader.run({...})` fallback), image attributes
and the Referer image CDNs check. Keys given next to `preset` override it;
a key set to null removes the preset's value.
"""

from __future__ import annotations

from typing import Any

from crawler.errors import SourceConfigError

_MADARA_IMAGE_ATTRS = ["data-src", "data-lazy-src", "srcset", "data-cfsrc", "src"]

# Headings as the families' sites print them in their languages (en, es, pt, tr, id, fr, it, vi, ar, th, ru, zh,
# ja): the per-site overrides of the long-maintained multi-source scrapers name these. `:contains` is
# case-insensitive and matches within words ("Status" also finds "Statüsü").
STATUS_HEADINGS = (
    "Status", "Estado", "Situação", "Durum", "Statut", "Stato", "Trạng thái", "الحالة", "حالة العمل", "สถานะ",
    "Статус", "状态", "連載状況",
)  # fmt: skip
AUTHOR_HEADINGS = (
    "Author", "Autor", "Auteur", "Autore", "Yazar", "Pengarang", "Penulis", "seniman", "Mangaka", "Tác giả",
    "المؤلف", "ผู้แต่ง", "Автор", "作者",
)  # fmt: skip
ALT_HEADINGS = (
    "Alt", "Otros nombres", "Outros nomes", "Nombres", "Diğer", "Autres noms", "Tên khác", "Nama lain",
    "أسماء أخرى", "الأسماء الثانوية", "ชื่ออื่น", "Другие названия", "别名",
)  # fmt: skip


def any_heading(template: str, words: tuple[str, ...]) -> str:
    """`template` (with `%s` for the heading word) once per word, as one selector list."""
    return ", ".join(template.replace("%s", word) for word in words)


MADARA: dict[str, Any] = {
    # Newest first; WordPress pages archives as /page/N/ (page 1 redirects to the bare archive). A quarter of
    # the sites renamed the manga directory ("comic", "series", "webtoon"): add_source reads it off the site.
    "list_url": "/{manga_path}/page/{page}/?m_orderby=latest",
    "list_anchor": "div.page-item-detail div.post-title a, .manga__item div.post-title a",
    "list_title": "::own",
    "list_next": "div.nav-previous, nav.navigation-ajax, a.nextpostslink",
    "title": "div.post-title h1, div.post-title h3, #manga-title > h1 ::own",
    "alt_titles": any_heading("div.post-content_item:contains(%s) div.summary-content", ALT_HEADINGS) + " ::own",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": (
        "div.description-summary div.summary__content, div.summary_content div.post-content_item > h5 + div, "
        "div.summary_content div.manga-excerpt, div.c-page__content div.summary__content"
    ),
    "authors": "div.author-content > a, div.manga-authors > a",
    # The headed row first; then any row's value that names a status, whatever the heading's language.
    "status": (
        any_heading("div.post-content_item:contains(%s) div.summary-content", STATUS_HEADINGS)
        + ", div.post-status div.summary-content, div.post-content_item div.summary-content"
    ),
    "tags": "div.genres-content a",
    "cover": "div.summary_image img",
    "chapter_item": "li.wp-manga-chapter",
    "chapter_link": "a",
    # The link's own text: some sites print the release date inside the link too.
    "chapter_title": "a ::own",
    # New chapters show a "new" badge whose title/alt holds a relative date; older ones print the date.
    "chapter_date": [
        "span.chapter-release-date a @title",
        "span.chapter-release-date img:not(.thumb) @alt",
        "span.chapter-release-date",
    ],
    "chapter_date_formats": ["%B %d, %Y", "%b %d, %Y", "%d %B %Y"],
    "chapter_url_suffix": "?style=list",
    # The theme loads the list by ajax from the holder's data-id (old endpoint); newer versions
    # answer that with 400 and serve {manga_url}/ajax/chapters/ instead.
    "chapter_list_id": "div[id^=manga-chapters-holder] @data-id",
    "chapter_list_url": "{base}/wp-admin/admin-ajax.php",
    "chapter_list_method": "POST",
    "chapter_list_body": {"action": "manga_get_chapters", "manga": "{id}"},
    "chapter_list_fallback_url": "{manga_url}/ajax/chapters/",
    "chapter_list_fallback_method": "POST",
    # Some sites print the images straight into div.reading-content, without the page-break wrappers.
    "page_image": "div.page-break img, li.blocks-gallery-item img, div.reading-content img.wp-manga-chapter-img",
    "image_attrs": _MADARA_IMAGE_ATTRS,
    "image_referer": "chapter",
}

# Sites whose archive is a "load more" button: the list comes from admin-ajax.php by POST.
MADARA_LOAD_MORE: dict[str, Any] = {
    **MADARA,
    "list_url": "/wp-admin/admin-ajax.php",
    "list_method": "POST",
    "list_body": {
        "action": "madara_load_more",
        "page": "{page_index}",
        "template": "madara-core/content/content-archive",
        "vars[orderby]": "meta_value_num",
        "vars[paged]": "1",
        "vars[post_type]": "wp-manga",
        "vars[post_status]": "publish",
        "vars[meta_key]": "_latest_update",
        "vars[order]": "desc",
        "vars[sidebar]": "right",
        "vars[manga_archives_item_layout]": "big_thumbnail",
    },
    "list_next": None,  # an empty answer past the last page ends the walk
}

MANGATHEMESIA: dict[str, Any] = {
    # A fifth of the sites list under /series/ (or /comics/, /komik/): add_source reads it off the site.
    "list_url": "/{manga_path}/?page={page}&order=update",
    "list_anchor": ".utao .uta .imgu a, .listupd .bs .bsx a, .listo .bs .bsx a",
    "list_next": "div.pagination .next, div.hpage .r",
    "title": "h1.entry-title ::own",
    "alt_titles": (
        ".seriestualt, .alternative, .alter, "
        + any_heading(".wd-full:contains(%s) span, .infotable tr:contains(%s) td:last-child", ALT_HEADINGS)
    ),
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": ".entry-content[itemprop=description], .desc, #manga-story",
    "authors": any_heading(
        ".infotable tr:contains(%s) td:last-child, .tsinfo .imptdt:contains(%s) i, .fmed b:contains(%s) + span",
        AUTHOR_HEADINGS,
    ),
    "status": (
        any_heading(
            ".infotable tr:contains(%s) td:last-child, .tsinfo .imptdt:contains(%s) i, .fmed b:contains(%s) + span",
            STATUS_HEADINGS,
        )
        + ", .status-badge-lux, .tsinfo .imptdt i, .infotable td:last-child"
    ),
    "tags": "div.gnr a, .mgen a, .seriestugenre a",
    "cover": ".infomanga > div[itemprop=image] img, .thumb img",
    # Sites print the list in a div.bxcl/div.cl block, as #chapterlist, or as a bare list of chbox entries.
    "chapter_item": (
        "div.bxcl li, div.cl li, #chapterlist li, ul li:has(div.chbox):has(div.eph-num), "
        "#chapters-list-container .ch-item"
    ),
    "chapter_link": "a",
    "chapter_title": ".lch a, .chapternum, .ch-num",
    "chapter_date": ".chapterdate, .ch-date",
    "chapter_date_formats": ["%B %d, %Y", "%b %d, %Y", "%d %B %Y"],
    # Some sites print a hidden decoy image for aggregators first.
    "page_image": 'div#readerarea img:not([style*="display: none"]):not([style*="display:none"])',
    # The reader is filled by script: ts_reader.run({..., "sources": [{"images": [...]}]}).
    "page_script": r"ts_reader\.run\((\{)",
    "page_script_path": "sources.0.images",
    "image_attrs": ["data-lazy-src", "data-src", "data-cfsrc", "srcset", "src"],
    "image_referer": "chapter",
}

# ManhwaZ copies Madara's markup without WordPress: the latest list is the home page paged by ?page=N,
# each detail page carries its whole chapter list (no ajax), dates are relative ("2 days ago").
MANHWAZ: dict[str, Any] = {
    "list_url": "/?page={page}",
    "list_anchor": ".page-item-detail .item-summary a",
    "list_title": "::own",
    "list_next": "ul.pager a[rel=next]",
    "title": "div.post-title h1 ::own",
    "alt_titles": any_heading("div.summary-heading:contains(%s) + div.summary-content", ALT_HEADINGS),
    "alt_titles_separator": r"\s*[,;]\s*",
    "authors": any_heading("div.summary-heading:contains(%s) + div.summary-content", AUTHOR_HEADINGS),
    "status": (
        any_heading("div.summary-heading:contains(%s) + div.summary-content", STATUS_HEADINGS) + ", div.summary-content"
    ),
    "description": "div.summary__content",
    "tags": "div.genres-content a",
    "cover": "div.summary_image img",
    "chapter_item": "li.wp-manga-chapter",
    "chapter_link": "a",
    "chapter_date": "span.chapter-release-date",
    "page_image": "div.page-break img",
    "image_attrs": _MADARA_IMAGE_ATTRS,
    "image_referer": "site",
}

# PizzaReader: a Vue front-end over a public JSON API, /api/comics the whole catalogue in one answer.
PIZZAREADER: dict[str, Any] = {
    "list_url": "/api/comics",
    "list_anchor": "$.comics[*]",
    "list_link": "{$.url}",
    "list_title": "$.title",
    "detail_url": "/api/comics/{key}",
    "title": "$.comic.title",
    "alt_titles": "$.comic.alt_titles[*]",
    "description": "$.comic.description",
    "authors": "$.comic.author",
    "status": "$.comic.status",
    "tags": "$.comic.genres[*].name",
    "cover": "$.comic.thumbnail",
    "chapter_item": "$.comic.chapters[*]",
    # A chapter's pages are read where its reader URL points, under /api.
    "chapter_link_url": "/api{$.url}",
    "chapter_title": "$.full_title",
    "chapter_number": "$.chapter",
    "chapter_date": "$.published_on",
    "page_image": "$.chapter.pages[*]",
    "image_referer": "site",
}

# Iken: a Next.js front-end over a JSON API, on the site itself or on its api.<host> sibling (api_base).
IKEN: dict[str, Any] = {
    "list_url": "{api}/api/query?page={page}&perPage=18&searchTerm=&orderBy=lastChapterAddedAt",
    "list_page_size": 18,
    "list_total": "$.totalCount",
    "list_anchor": "$.posts[?isNovel = false]",
    "list_link": "/series/{$.slug}",
    "list_title": "$.postTitle",
    "detail_url": "{api}/api/post?postSlug={key}",
    "title": "$.post.postTitle",
    "alt_titles": "$.post.alternativeTitles",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": "$.post.postContent | html:p",
    "authors": "$.post.author",
    "status": "$.post.seriesStatus",
    "tags": "$.post.genres[*].name",
    "cover": "$.post.featuredImage",
    "chapter_item": "$.post.chapters[*]",
    "chapter_link_url": "{api}/api/chapter?chapterId={$.id}",
    "chapter_key": "{$.mangaPost.slug}/{$.slug}",
    "chapter_number": "$.number",
    "chapter_date": "$.createdAt",
    # Paid or not yet public chapters: listed, but their pages are not served.
    "chapter_skip": ["$.isLocked", "$.isTimeLocked", "$[?isAccessible = false].id"],
    "page_image": "$.chapter.images[/order][*].url",
    "image_referer": "site",
}

# ZeistManga: a Blogger blog. Series and chapters are posts, listed through Blogger's JSON feed; a series
# post names its chapters' label in clwd.run('...'); a chapter post prints its images.
ZEISTMANGA: dict[str, Any] = {
    "list_url": "/feeds/posts/default/-/Series?alt=json&orderby=published&start-index={start_index}&max-results=20",
    "list_page_size": 20,
    "list_total": "$.feed.'openSearch$totalResults'.'$t'",
    "list_anchor": "$.feed.entry[*]",
    "list_link": "{$.link[?rel = 'alternate'].href}",
    "list_title": "$.title.'$t'",
    "manga_key_pattern": r"/([^/]+?)\.html$",
    "title": ".grid.gtc-235fr header h1, h1.entry-title ::own",
    "alt_titles": ".grid.gtc-235fr header > p",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": "#synopsis",
    "authors": "span#author",
    "status": any_heading(".y6x11p:contains(%s) span.dt", STATUS_HEADINGS),
    "tags": "div.mt-15 > a[rel=tag]",
    "cover": ".grid.gtc-235fr img",
    "chapter_item": "$.feed.entry[*]",
    "detail_captures": {"label": r"re:clwd\.run\(\s*[\"'](.*?)[\"']\s*\) | urlencode"},
    "chapter_list_url": ("/feeds/posts/default/-/Chapter/{label}?alt=json&start-index={start_index}&max-results=150"),
    "chapter_list_method": "GET",
    "chapter_list_page_size": 150,
    "chapter_list_total": "$.feed.'openSearch$totalResults'.'$t'",
    "chapter_link_url": "{$.link[?rel = 'alternate'].href}",
    "chapter_number": r"$.title.'$t' | re:(\d+(?:\.\d+)?)\D*$",
    "chapter_date": "$.published.'$t'",
    "page_image": "div.check-box div.separator img",
    "image_attrs": ["src"],
    "image_referer": "site",
}

PRESETS: dict[str, dict[str, Any]] = {
    "madara": MADARA,
    "madara-load-more": MADARA_LOAD_MORE,
    "mangathemesia": MANGATHEMESIA,
    "manhwaz": MANHWAZ,
    "pizzareader": PIZZAREADER,
    "iken": IKEN,
    "zeistmanga": ZEISTMANGA,
}


def apply_preset(data: dict[str, Any], *, source_id: str) -> dict[str, Any]:
    """`data` with its preset's keys filled in underneath (explicit keys win); unchanged without one."""
    name = data.get("preset")
    if name is None:
        return data
    if name not in PRESETS:
        raise SourceConfigError(
            f"source {source_id!r}: settings key 'preset' names no known preset {name!r} "
            f"(known: {', '.join(sorted(PRESETS))})"
        )
    return {**PRESETS[name], **data}
