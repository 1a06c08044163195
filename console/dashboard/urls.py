"""The crawler's admin pages under /admin/crawler/: the dashboard (staff) and the Sources page (operators)."""

from django.urls import path

from console.dashboard import sources, suwayomi_sources
from console.dashboard.views import dashboard

urlpatterns = [
    path("", dashboard, name="crawler-dashboard"),
    path("sources/", sources.source_list, name="crawler-sources"),
    path("sources/add/", sources.source_add, name="crawler-source-add"),
    path("sources/add-suwayomi/", suwayomi_sources.source_add_suwayomi, name="crawler-source-add-suwayomi"),
    path("sources/<slug:source_id>/crawl/", sources.source_crawl_now, name="crawler-source-crawl"),
    path("sources/<slug:source_id>/settings/", sources.source_settings, name="crawler-source-settings"),
]
