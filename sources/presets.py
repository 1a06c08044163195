"""Settings presets for the WordPress manga theme families: `{"preset": "madara"}` and friends.

The smaller families (JSON APIs and plain HTML readers) are in `sources.family_presets`.

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

from sources.errors import SourceConfigError
from sources.family_presets import FAMILY_PRESETS
from sources.headings import ALT_HEADINGS, AUTHOR_HEADINGS, STATUS_HEADINGS, any_heading

_MADARA_IMAGE_ATTRS = ["data-src", "data-lazy-src", "srcset", "data-cfsrc", "src"]

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

PRESETS: dict[str, dict[str, Any]] = {
    "madara": MADARA,
    "madara-load-more": MADARA_LOAD_MORE,
    "mangathemesia": MANGATHEMESIA,
    "manhwaz": MANHWAZ,
    **FAMILY_PRESETS,
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
