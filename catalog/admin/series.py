"""The series in the admin: merge selected series, split mangas out, undo a change, review suggested merges;
on a series' page, its source order, whether it downloads alternates, and which source serves each chapter.

Every action calls catalog.series, the same functions the API and
`manage.py series` call, and needs the `catalog.merge_series` permission
(the Operators group holds it); without it the series are read-only here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog import series as service
from catalog.admin.series_chapters import chapter_sources_table
from catalog.models import Manga, Series, SeriesChange, SeriesSuggestion
from listing.admin_bases import ReadOnlyAdmin

MERGE_PERMISSION = "catalog.merge_series"


class MergePermission:
    """`permissions=["merge_series"]` on an action offers it only to holders of catalog.merge_series."""

    def has_merge_series_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(MERGE_PERMISSION)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Who may merge sees what they merge, without a separate view permission on every series table.
        return super().has_view_permission(request, obj) or self.has_merge_series_permission(request)  # type: ignore[misc]


def _refused(modeladmin: admin.ModelAdmin, request: HttpRequest, exc: service.SeriesChangeRefused) -> None:
    modeladmin.message_user(request, str(exc), level=messages.ERROR)


def _each(
    modeladmin: admin.ModelAdmin, request: HttpRequest, rows: Iterable[Any], do: Callable[[Any], Any], done: str
) -> None:
    """`do` each row in turn; the first refusal stops there and is shown, the rows before it stay done."""
    count = 0
    for row in rows:
        try:
            do(row)
        except service.SeriesChangeRefused as exc:
            return _refused(modeladmin, request, exc)
        count += 1
    modeladmin.message_user(request, done.format(count=count))
    return None


class SeriesForm(forms.ModelForm):
    class Meta:
        model = Series
        fields = ("title", "source_order", "download_alternates")

    def clean_source_order(self) -> list[str]:
        order = self.cleaned_data["source_order"]
        if not isinstance(order, list) or not all(isinstance(s, str) and s for s in order):
            raise forms.ValidationError(
                'A list of source ids, preferred first: ["alpha", "beta"]; [] for the global order.'
            )
        return order


class MangaInline(admin.TabularInline):
    model = Manga
    fields = ("title", "cover_state", "latest_chapter_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Series)
class SeriesAdmin(MergePermission, admin.ModelAdmin):
    list_display = ("title", "source_order", "created_at")
    search_fields = ("title",)
    form = SeriesForm
    fields = ("title", "source_order", "download_alternates", "merged_into", "chapter_sources")
    readonly_fields = ("merged_into", "chapter_sources")
    inlines = (MangaInline,)
    actions = ("merge_into_oldest",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Series]:
        # Series emptied by a merge are kept for undo only; their change rows say where they went.
        return super().get_queryset(request).filter(merged_into=None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_merge_series_permission(request)

    def save_model(self, request: HttpRequest, obj: Series, form: forms.ModelForm, change: bool) -> None:
        # Alternates go through the service, which tells the crawler to queue the copies now wanted.
        alternates = obj.download_alternates
        if change and "download_alternates" in form.changed_data:
            obj.download_alternates = not alternates
        super().save_model(request, obj, form, change)
        if change and "download_alternates" in form.changed_data:
            service.set_download_alternates(obj, alternates, actor=request.user, via="admin")

    @admin.display(description="Chapters: served source and alternates")
    def chapter_sources(self, series: Series) -> str:
        return chapter_sources_table(series)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a series comes with its first manga

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # mangas are deleted, series merged

    @admin.action(description="Merge the selected series into the oldest", permissions=["merge_series"])
    def merge_into_oldest(self, request: HttpRequest, queryset: QuerySet[Series]) -> None:
        target, *others = queryset.order_by("created_at", "id")
        try:
            change = service.merge_series(target, others, actor=request.user, via="admin")
        except service.SeriesChangeRefused as exc:
            return _refused(self, request, exc)
        self.message_user(request, f"Merged {len(change.moves)} manga(s) into {target}.")
        return None


@admin.action(description="Split the selected mangas out of their series", permissions=["merge_series"])
def split_out_of_series(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Manga]) -> None:
    try:
        change = service.split_mangas(list(queryset), actor=request.user, via="admin")
    except service.SeriesChangeRefused as exc:
        return _refused(modeladmin, request, exc)
    modeladmin.message_user(request, f"Split {len(change.moves)} manga(s) into series of their own.")
    return None


@admin.register(SeriesChange)
class SeriesChangeAdmin(MergePermission, ReadOnlyAdmin):
    list_display = ("created_at", "action", "via", "actor", "reason", "moved")
    list_filter = ("action", "via")
    actions = ("undo",)

    @admin.display(description="Mangas moved")
    def moved(self, change: SeriesChange) -> int:
        return len(change.moves)

    @admin.action(description="Undo the selected changes (newest first)", permissions=["merge_series"])
    def undo(self, request: HttpRequest, queryset: QuerySet[SeriesChange]) -> None:
        changes = queryset.order_by("-created_at", "-id")
        _each(
            self,
            request,
            changes,
            lambda c: service.undo_change(c, actor=request.user, via="admin"),
            "Undid {count} change(s).",
        )


@admin.register(SeriesSuggestion)
class SeriesSuggestionAdmin(MergePermission, ReadOnlyAdmin):
    """The review page of suggested merges: confirm merges the pair, reject keeps them apart for good."""

    list_display = ("first", "second", "evidence", "state", "decided_by", "created_at")
    list_filter = ("state",)
    list_select_related = ("first", "second", "decided_by")
    actions = ("confirm", "reject")

    @admin.action(description="Confirm: merge each pair", permissions=["merge_series"])
    def confirm(self, request: HttpRequest, queryset: QuerySet[SeriesSuggestion]) -> None:
        confirm = service.confirm_suggestion
        _each(self, request, queryset, lambda s: confirm(s, actor=request.user, via="admin"), "Merged {count} pair(s).")

    @admin.action(description="Reject: they are different series", permissions=["merge_series"])
    def reject(self, request: HttpRequest, queryset: QuerySet[SeriesSuggestion]) -> None:
        reject = service.reject_suggestion
        _each(self, request, queryset, lambda s: reject(s, actor=request.user), "Rejected {count} suggestion(s).")
