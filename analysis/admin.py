"""Page analyses in the Django admin: read-only results, and force-analyze actions.

The actions (on page analyses, and on the crawler's job admin, re-registered
here because analysis owns the action) call `analysis.control.force_analyze`,
the same function as the admin API's force-analyze route, so all audit and
behave alike.
"""

from collections import Counter

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from analysis import control
from analysis.models import PageAnalysis
from catalog.models import Page
from crawler import admin as crawler_admin
from crawler.control.errors import ControlError
from jobs.models import Job


@admin.register(PageAnalysis)
class PageAnalysisAdmin(crawler_admin.OperatorActions, admin.ModelAdmin):
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

    @admin.action(description="Force re-analysis of the selected pages", permissions=["operate"])
    def force_analyze(self, request: HttpRequest, queryset: QuerySet[PageAnalysis]) -> None:
        pages = list(Page.objects.filter(id__in=queryset.values_list("page_id", flat=True)))
        try:
            outcomes = Counter(control.force_analyze(actor=request.user, page=page).value for page in pages)
        except ControlError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "nothing to do"
        self.message_user(request, f"Force re-analysis for {len(pages)} page(s): {summary}.", messages.SUCCESS)


admin.site.unregister(Job)


@admin.register(Job)
class JobAdmin(crawler_admin.JobAdmin):
    actions = (*crawler_admin.JobAdmin.actions, "force_analyze")

    @admin.action(description="Force-analyze the pages of selected analyze_page jobs", permissions=["operate"])
    def force_analyze(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        page_ids = queryset.filter(kind="analyze_page").values_list("page_id", flat=True)
        pages = list(Page.objects.filter(id__in=page_ids))
        try:
            outcomes = [control.force_analyze(actor=request.user, page=page) for page in pages]
        except ControlError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        summary = ", ".join(sorted({o.value for o in outcomes})) or "none"
        self.message_user(request, f"Force-analyze queued for {len(pages)} page(s): {summary}.", messages.SUCCESS)
