"""Read progress API routes, mounted under /api/v1/."""

from django.urls import path

from reader.api import ProgressDetail, ProgressList

app_name = "reader-api"

urlpatterns = [
    path("progress/", ProgressList.as_view(), name="progress-list"),
    path("progress/<uuid:chapter_id>/", ProgressDetail.as_view(), name="progress-detail"),
]
