"""The crawler dashboard page under /admin/crawler/ (staff only; others go to the admin login)."""

from django.urls import path

from crawler.status.views import dashboard

urlpatterns = [
    path("", dashboard, name="crawler-dashboard"),
]
