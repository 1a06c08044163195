"""Settings presets for the smaller site families: JSON APIs (PizzaReader, Iken, ZeistManga) and plain readers.

Each preset is the family's stock endpoints and markup as its shared code in the
long-maintained multi-source scrapers describes them (keiyoushi/extensions-source
`lib-multisrc/<family>`), written in the preset language of
`sources.config`: JSONPaths where the family answers JSON, CSS where it
prints HTML. Keys given next to `preset` override it, as for the theme presets.
"""

from __future__ import annotations

from typing import Any

from sources.headings import AUTHOR_HEADINGS, STATUS_HEADINGS, any_heading

# PizzaReader: a Vue front-end over a public JSON API, /api/comics the whole catalogue in one answer.
PIZZAREADER: dict[str, Any] = {
    "list_url": "/api/comics",
    "list_anchor": "$.comics[*]",
    # The catalogue comes in the site's own order: newest chapter first, as the family's latest list sorts it.
    "list_sort": "$.last_chapter.published_on",
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


# My Manga Reader CMS (Laravel): latest releases paged by ?page=N, a Bootstrap detail page with a
# dl-horizontal of headed values, chapters "{manga} {n} : <em>title</em>" dated "d MMM. yyyy".
MMRCMS: dict[str, Any] = {
    "list_url": "/latest-release?page={page}",
    "list_anchor": "div.mangalist div.manga-item .manga-heading a, div.mangalist div.manga-item .media-heading a",
    "list_title": "::own",
    "list_next": ".pagination a[rel=next]",
    "title": ".listmanga-header, .widget-title ::own",
    "alt_titles": "dl.dl-horizontal dt:contains(Other names) + dd, dl.dl-horizontal dt:contains(Autres noms) + dd",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": ".row .well p",
    "authors": any_heading("dl.dl-horizontal dt:contains(%s) + dd", AUTHOR_HEADINGS),
    "status": any_heading("dl.dl-horizontal dt:contains(%s) + dd", STATUS_HEADINGS),
    "tags": "dl.dl-horizontal dt:contains(Categories) + dd a, dl.dl-horizontal dt:contains(Catégories) + dd a",
    "cover": ".row img.img-responsive",
    "chapter_item": "ul.chapters > li:not(.btn)",
    "chapter_link": ".chapter-title-rtl a",
    # The link prints "{manga title} {n}": the number is read off the URL, the own title from <em>.
    "chapter_title": ".chapter-title-rtl em",
    "chapter_number": r".chapter-title-rtl a @href | re:/(\d+(?:\.\d+)?)/?$",
    "chapter_date": ".date-chapter-title-rtl",
    "chapter_date_formats": ["%d %b. %Y", "%d %b %Y"],
    "page_image": "#all > img.img-responsive",
    "image_attrs": ["data-src", "src"],
    "image_referer": "site",
}

# WPComics (NetTruyen-style, not WordPress): latest on the home page paged by ?page=N, article#item-detail,
# chapters in div.list-chapter rows dated "HH:mm - dd/MM/yyyy" in the site's zone (GMT+7 on the Vietnamese
# sites, the family's main language) or relative ("2 ngày trước").
WPCOMICS: dict[str, Any] = {
    "list_url": "/?page={page}",
    "list_anchor": "div.items div.item h3 a",
    "list_title": "::own",
    "list_next": "a.next-page, a[rel=next]",
    "title": "article#item-detail h1.title-detail ::own",
    "alt_titles": "article#item-detail h2.other-name",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": "article#item-detail div.detail-content p",
    "authors": "article#item-detail li.author p.col-xs-8",
    "status": "article#item-detail li.status p.col-xs-8",
    "tags": "article#item-detail li.kind p.col-xs-8 a",
    "cover": "article#item-detail div.col-image img",
    "chapter_item": "div.list-chapter li.row:not(.heading)",
    "chapter_link": "div.chapter a, a",
    "chapter_date": "div.col-xs-4",
    "chapter_date_formats": ["%H:%M - %d/%m/%Y", "%H:%M %d/%m/%Y"],
    "date_utc_offset": "+07:00",
    "page_image": "div.page-chapter > img, li.blocks-gallery-item img",
    "image_attrs": ["data-original", "data-src", "src"],
    "image_referer": "site",
}

# FoOlSlide: series under /series/{slug}/, latest under /latest/{page}/, pages in `var pages = [{"url": ...}]`,
# and an adult gate answered by POSTing adult=true (the session then remembers it).
FOOLSLIDE: dict[str, Any] = {
    "list_url": "/latest/{page}/",
    "list_anchor": "div.group > div.title a[title]",
    "list_title": "::own",
    "list_next": "div.next",
    "gate_url": "/latest/1/",
    "gate_body": {"adult": "true"},
    "title": "div.large.comic h1.title, h1.title ::own",
    # div.info prints "<b>Author</b>: name<br>" rows: read off the markup, as the family's scrapers do.
    "description": r"re:(?i)(?:Synopsis|Description|Trama)</b>:\s?([^\n<]*)",
    "authors": r"re:(?i)(?:Author|Autore)</b>:\s?([^\n<]*)",
    "cover": "div.thumbnail img, table.thumb img",
    "chapter_item": "div.group div.element, div.list div.element",
    "chapter_link": "div.title a[title], a[title]",
    "chapter_title": "div.title a[title]",
    "chapter_date": r"div.meta_r | re:,\s*([^,]+)$",
    "chapter_date_formats": ["%Y.%m.%d", "%d %B, %Y"],
    "page_image": None,
    "page_script": r"var\s+pages\s*=\s*(\[)",
    "page_script_path": "$[*].url",
    "image_referer": "site",
}

# Keyoapp: one-page latest list of cards with background-image covers; chapters with paid (Coin.svg) and
# upcoming entries to skip; page images are `uid`s joined to the CDN an inline script names (realUrl).
# A detail row is <div><span>Status</span></div><div>value</div>: the heading's own div, then the next one.
_BACKGROUND_URL = r"re:url\(['\"]?([^'\")]+)"
KEYOAPP: dict[str, Any] = {
    "list_url": "/latest/?page={page}",
    "list_anchor": "div.grid > div.group a[href][title]",
    # The latest list is one page: no page link ever matches, so the walk ends after it.
    "list_next": "a[rel=next]",
    "title": "div.grid > h1 ::own",
    "alt_titles": "div:has(> span:containsOwn(Alternative)) + div",
    "alt_titles_separator": r"\s*[,;]\s*",
    "description": "div:containsOwn(Synopsis) + div",
    "authors": "div:has(> span:containsOwn(Author)) + div",
    "status": "div:has(> span:containsOwn(Status)) + div",
    "tags": "div.grid:has(> h1) > div > a",
    "cover": "div[class*=photoURL] @style | " + _BACKGROUND_URL,
    "chapter_item": "#chapters > a",
    "chapter_link": "a",
    "chapter_title": ".text-sm ::own",
    "chapter_date": ".text-xs",
    "chapter_date_formats": ["%b %d, %Y"],
    "chapter_skip": ["img[src*='Coin.svg'] @src", ".text-sm span:containsOwn(Upcoming)"],
    "page_image": "#pages > img[uid]",
    "image_attrs": ["uid"],
    "page_captures": {"cdn": r"re:realUrl\s*=\s*`(https?://[^/`$]+)"},
    "page_image_url": "{cdn}/uploads/{value}",
    "image_referer": "site",
}

FAMILY_PRESETS: dict[str, dict[str, Any]] = {
    "pizzareader": PIZZAREADER,
    "iken": IKEN,
    "zeistmanga": ZEISTMANGA,
    "mmrcms": MMRCMS,
    "wpcomics": WPCOMICS,
    "foolslide": FOOLSLIDE,
    "keyoapp": KEYOAPP,
}
