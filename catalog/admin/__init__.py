"""The library's tables in the Django admin, registered once, here.

Apps built on the catalog add what they own through the extension points of
`listing.admin_bases.ExtensibleAdmin` (the console's "queue downloads" actions)
and `SourceAdmin.editor` (the console's audited source changes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from django.contrib import admin
from django.http import HttpRequest

from catalog import source_settings
from catalog.admin.series import MergePermission, split_out_of_series
from catalog.chapter_names import display_title
from catalog.models import Bookmark, Chapter, Manga, MangaSource, Page, Source, Tag
from listing.admin_bases import BigTableAdmin, ExtensibleAdmin

if TYPE_CHECKING:
    from django import forms
    from django.db.models import QuerySet


class SourceEditor(Protocol):
    """The path every change to a source takes, installed by the app that owns it (the console's audited one)."""

    form: type[forms.ModelForm]

    def may_edit(self, request: HttpRequest) -> bool: ...

    def readonly_fields(self, obj: Source | None) -> tuple[str, ...]: ...

    def save(
        self, modeladmin: admin.ModelAdmin, request: HttpRequest, source: Source, form: Any, change: bool
    ) -> None: ...

    def delete(self, request: HttpRequest, source: Source) -> None: ...


@admin.register(Source)
class SourceAdmin(ExtensibleAdmin):
    """Read-only until an editor is installed: a source's URL and settings decide what the server fetches,
    so only an operator-checked, audited path may change them (the console installs it as `editor`)."""

    list_display = ("id", "name", "kind", "base_url", "enabled")
    list_filter = ("kind", "enabled")
    search_fields = ("id", "name", "base_url")
    editor: ClassVar[SourceEditor | None] = None

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if self.editor is not None:
            kwargs.setdefault("form", self.editor.form)
        return super().get_form(request, obj, change, **kwargs)

    # The editor's permission is the permission for sources: the model permissions neither add nor take away.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.editor is not None and self.editor.may_edit(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.editor is not None and self.editor.may_edit(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.editor is not None and self.editor.may_edit(request)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        """Shown read-only (no editor, or not allowed to edit), the settings are shown with their secrets masked."""
        fields = list(super().get_fields(request, obj))
        if obj is not None and not self.has_change_permission(request, obj):
            fields = ["shown_settings" if name == "settings" else name for name in fields]
        return fields

    @admin.display(description="settings")
    def shown_settings(self, obj: Source) -> str:
        return json.dumps(source_settings.masked(obj.settings), indent=2, ensure_ascii=False)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self.editor is None:
            return super().get_readonly_fields(request, obj)
        return self.editor.readonly_fields(obj)

    def save_model(self, request: HttpRequest, obj: Source, form: Any, change: bool) -> None:
        if self.editor is not None:
            self.editor.save(self, request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Source) -> None:
        if self.editor is not None:
            self.editor.delete(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            self.delete_model(request, source)


@admin.register(Manga)
class MangaAdmin(MergePermission, ExtensibleAdmin):
    list_display = ("title", "series", "status", "cover_state", "latest_chapter_at", "updated_at")
    list_select_related = ("series",)
    list_filter = ("status", "cover_state")
    search_fields = ("title",)
    # A manga changes series only by an audited merge or split (the actions), never by editing the field.
    readonly_fields = ("series", "cover_hash")
    own_actions = (split_out_of_series,)


@admin.register(MangaSource)
class MangaSourceAdmin(admin.ModelAdmin):
    list_display = ("manga", "source", "source_manga_key", "dropped_at")
    list_filter = ("source",)
    search_fields = ("source_manga_key", "manga__title")
    raw_id_fields = ("manga",)


@admin.register(Chapter)
class ChapterAdmin(BigTableAdmin, ExtensibleAdmin):
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
