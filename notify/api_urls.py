"""Notification URL API routes, mounted under /api/v1/."""

from django.urls import path

from notify.api import TargetDetail, TargetList, TargetTest

app_name = "notify-api"

urlpatterns = [
    path("notifications/", TargetList.as_view(), name="target-list"),
    path("notifications/<uuid:target_id>/", TargetDetail.as_view(), name="target-detail"),
    path("notifications/<uuid:target_id>/test/", TargetTest.as_view(), name="target-test"),
]
