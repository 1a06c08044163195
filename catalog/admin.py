"""The library's tables in the Django admin.

Apps built on the catalog add their own actions by registering a subclass of
these admins (the crawler's "queue downloads" actions live in `crawler.admin`).
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from catalog.chapter_names import display_title
from catalog.models import Bookmark, Chapter, Manga, MangaSource, Page, Source, Tag
from catalog.paginators import CappedCountPaginator

# A changelist counts its rows up to this many: past it the count is a lower bound.
ADMIN_COUNT_CAP = 10_000


class CappedAdminPaginator(CappedCountPaginator):
    """Changelists of big tables (1.5 million chapters, millions of jobs) count at most ADMIN_COUNT_CAP rows per load.

    With `show_full_result_count = False` on the admin, a page load reads the
    page and at most the cap's worth of index entries, never every row.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cap = ADMIN_COUNT_CAP


# Stands for a row's primary key in a change URL reversed once per page.
_ANY_PK = "0"


class OneReverseChangeList(ChangeList):
    """Each row's change link from one reversed URL: `reverse` per row was the biggest cost of a 100-row page."""

    def url_for_result(self, result: Any) -> str:
        if not hasattr(self, "_change_url"):
            opts = self.opts
            route = f"admin:{opts.app_label}_{opts.model_name}_change"
            self._change_url = reverse(route, args=(_ANY_PK,), current_app=self.model_admin.admin_site.name)
        head, _, tail = self._change_url.rpartition(f"/{_ANY_PK}/")
        return f"{head}/{quote(result.pk)}/{tail}"


class BigTableAdmin(admin.ModelAdmin):
    """Changelists of tables with millions of rows: a capped count and rows that cost no template or URL lookup each."""

    paginator = CappedAdminPaginator
    show_full_result_count = False
    list_per_page = 50

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return OneReverseChangeList

    # Django renders this through the form widget templates, once per row; the same markup, formatted directly.
    @admin.display(description=mark_safe('<input type="checkbox" id="action-toggle">'))
    def action_checkbox(self, obj: Any) -> str:
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="Select this object for an '
            'action - {}">',
            helpers.ACTION_CHECKBOX_NAME,
            str(obj.pk),
            obj,
        )


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the admin shows and no one changes through it, whatever their model permissions say."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Source)
class SourceAdmin(ReadOnlyAdmin):
    """Read-only here: a source's URL and settings decide what the server fetches, so only the crawler's
    operator-checked, audited path may change them (`crawler.admin.SourceAdmin` replaces this one with it)."""

    list_display = ("id", "name", "kind", "base_url", "enabled")
    list_filter = ("kind", "enabled")
    search_fields = ("id", "name", "base_url")


@admin.register(Manga)
class MangaAdmin(admin.ModelAdmin):
    list_display = ("title", "status", "cover_state", "latest_chapter_at", "updated_at")
    list_filter = ("status", "cover_state")
    search_fields = ("title",)


@admin.register(MangaSource)
class MangaSourceAdmin(admin.ModelAdmin):
    list_display = ("manga", "source", "source_manga_key", "dropped_at")
    list_filter = ("source",)
    search_fields = ("source_manga_key", "manga__title")
    raw_id_fields = ("manga",)


@admin.register(Chapter)
class ChapterAdmin(BigTableAdmin):
    list_display = ("manga", "shown_as", "kind", "volume", "number", "sync_state", "page_count", "dropped_at")
    list_filter = ("kind", "sync_state", "source")
    search_fields = ("manga__title", "title", "source_chapter_key")
    raw_id_fields = ("manga",)

    @admin.display(description="Shown as", ordering="title")
    def shown_as(self, chapter: Chapter) -> str:
        """What every reader shows ("Chapter 12: The Gate", "Side Story 3"), not the bare stored fields."""
        return display_title(chapter.number, chapter.title, chapter.kind, chapter.volume)


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("chapter", "index", "content_type", "width", "height", "bytes")
    raw_id_fields = ("chapter",)


admin.site.register(Tag)


@admin.register(Bookmark)
class BookmarkAdmin(admin.ModelAdmin):
    list_display = ("user", "manga", "chapter", "created_at")
    raw_id_fields = ("manga", "chapter")
