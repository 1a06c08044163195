"""Page analyses in the Django admin: read-only results, registered once, here.

Forcing a re-analysis is an operator's control (audited, refused while
analysis is off): the console adds that action, here and on the job admin,
through `ExtensibleAdmin.extend` (`console.admin`).
"""

from django.contrib import admin
from django.http import HttpRequest

from analysis.models import PageAnalysis
from listing.admin_bases import ExtensibleAdmin


@admin.register(PageAnalysis)
class PageAnalysisAdmin(ExtensibleAdmin):
    list_display = ("page", "state", "nsfw", "nsfw_score", "backend", "duration_ms", "analyzed_at")
    list_filter = ("state", "nsfw", "backend")
    search_fields = ("ocr_text", "scene_description", "page__chapter__manga__title")
    list_select_related = ("page",)
    readonly_fields = [f.name for f in PageAnalysis._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: PageAnalysis | None = None) -> bool:
        # Results come from the workers only; the change view stays viewable through view permission.
        return False
