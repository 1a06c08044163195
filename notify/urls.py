"""The notifications section of the account page, under /account/notifications/."""

from django.urls import path

from notify import views

app_name = "notify"

urlpatterns = [
    path("", views.notifications, name="account"),
    path("<uuid:target_id>/test/", views.send_test, name="test"),
    path("<uuid:target_id>/remove/", views.remove, name="remove"),
]
