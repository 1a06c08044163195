"""The verify report under /admin/verify/ (staff), its actions (operators)."""

from django.urls import path

from upkeep.views import verify_action, verify_report

urlpatterns = [
    path("", verify_report, name="upkeep-verify"),
    path("<slug:action>/", verify_action, name="upkeep-verify-action"),
]
