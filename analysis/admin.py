from django.contrib import admin

from analysis.models import PageAnalysis


@admin.register(PageAnalysis)
class PageAnalysisAdmin(admin.ModelAdmin):
    list_display = ("page", "state", "nsfw", "backend", "duration_ms", "analyzed_at")
    list_filter = ("state", "nsfw", "backend")
