"""kosync routes under /kosync/: the URL KOReader's "Custom sync server" points at."""

from django.urls import path

from reader.kosync import views

app_name = "kosync"

urlpatterns = [
    path("users/create", views.create_user, name="create-user"),
    path("users/auth", views.auth_user, name="auth"),
    path("syncs/progress", views.update_progress, name="update-progress"),
    path("syncs/progress/<str:document>", views.get_progress, name="progress"),
    path("healthcheck", views.healthcheck, name="healthcheck"),
]
