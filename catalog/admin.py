from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog.models import Bookmark, Chapter, Manga, MangaSource, Page, Source, Tag
from crawler import control


def _report_enqueued(modeladmin: admin.ModelAdmin, request: HttpRequest, enqueued: int) -> None:
    modeladmin.message_user(request, f"Queued {enqueued} chapter download(s).", messages.SUCCESS)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "kind", "base_url", "enabled")
    list_filter = ("kind", "enabled")
    search_fields = ("id", "name", "base_url")


@admin.register(Manga)
class MangaAdmin(admin.ModelAdmin):
    list_display = ("title", "status", "cover_state", "latest_chapter_at", "updated_at")
    list_filter = ("status", "cover_state")
    search_fields = ("title",)
    actions = ("requeue_chapters",)

    @admin.action(description="Queue downloads of not-yet-downloaded chapters")
    def requeue_chapters(self, request: HttpRequest, queryset: QuerySet[Manga]) -> None:
        enqueued = sum(
            control.enqueue_missing_content(
                actor=request.user, chapters=Chapter.objects.filter(manga=manga), scope="manga", target_id=manga.id
            )
            for manga in queryset
        )
        _report_enqueued(self, request, enqueued)


@admin.register(MangaSource)
class MangaSourceAdmin(admin.ModelAdmin):
    list_display = ("manga", "source", "source_manga_key", "dropped_at")
    list_filter = ("source",)
    search_fields = ("source_manga_key", "manga__title")
    raw_id_fields = ("manga",)


@admin.register(Chapter)
class ChapterAdmin(admin.ModelAdmin):
    list_display = ("manga", "number", "title", "sync_state", "page_count", "dropped_at")
    list_filter = ("sync_state", "source")
    search_fields = ("manga__title", "title", "source_chapter_key")
    raw_id_fields = ("manga",)
    actions = ("requeue_chapters",)

    @admin.action(description="Queue downloads of selected chapters (not yet downloaded)")
    def requeue_chapters(self, request: HttpRequest, queryset: QuerySet[Chapter]) -> None:
        ids = list(queryset.values_list("id", flat=True))
        enqueued = control.enqueue_missing_content(
            actor=request.user,
            chapters=Chapter.objects.filter(id__in=ids),
            scope="chapter",
            target_id=ids[0] if len(ids) == 1 else "",
        )
        _report_enqueued(self, request, enqueued)


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("chapter", "index", "content_type", "width", "height", "bytes")
    raw_id_fields = ("chapter",)


admin.site.register(Tag)


@admin.register(Bookmark)
class BookmarkAdmin(admin.ModelAdmin):
    list_display = ("user", "manga", "chapter", "created_at")
    raw_id_fields = ("manga", "chapter")
