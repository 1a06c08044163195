"""Routes of the library API under /api/v1/: mangas, chapters, pages and their images, tags, bookmarks."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api import TokenView
from catalog.api.views import BookmarkViewSet, ChapterViewSet, MangaViewSet, PageImageView

app_name = "catalog-api"

router = SimpleRouter()
router.register("mangas", MangaViewSet, basename="manga")
router.register("chapters", ChapterViewSet, basename="chapter")
router.register("bookmarks", BookmarkViewSet, basename="bookmark")

urlpatterns = [
    path("pages/<str:pk>/image/", PageImageView.as_view(), name="page-image"),
    path("auth/token/", TokenView.as_view(), name="auth-token"),
    *router.urls,
]
