"""Page analyses in the Django admin: read-only results, and a force-analyze action.

The action calls `crawler.control.force_analyze`, the same function as the
admin API's force-analyze route, so both audit and behave alike.
"""

from collections import Counter

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from analysis.models import PageAnalysis
from catalog.models import Page
from crawler import control


@admin.register(PageAnalysis)
class PageAnalysisAdmin(admin.ModelAdmin):
    list_display = ("page", "state", "nsfw", "nsfw_score", "backend", "duration_ms", "analyzed_at")
    list_filter = ("state", "nsfw", "backend")
    search_fields = ("ocr_text", "scene_description", "page__chapter__manga__title")
    list_select_related = ("page",)
    readonly_fields = [f.name for f in PageAnalysis._meta.fields]
    actions = ("force_analyze",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: PageAnalysis | None = None) -> bool:
        # Results come from the workers only; the change view stays viewable through view permission.
        return False

    @admin.action(description="Force re-analysis of the selected pages")
    def force_analyze(self, request: HttpRequest, queryset: QuerySet[PageAnalysis]) -> None:
        pages = list(Page.objects.filter(id__in=queryset.values_list("page_id", flat=True)))
        try:
            outcomes = Counter(control.force_analyze(actor=request.user, page=page).value for page in pages)
        except control.ControlError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "nothing to do"
        self.message_user(request, f"Force re-analysis for {len(pages)} page(s): {summary}.", messages.SUCCESS)
