"""Routes of the library API under /api/v1/: mangas, chapters, pages and their images, tags, bookmarks, series."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api import TokenView
from catalog.api import series_views as series
from catalog.api.series_reads import SeriesViewSet
from catalog.api.views import BookmarkViewSet, ChapterViewSet, MangaViewSet, PageImageView

app_name = "catalog-api"

router = SimpleRouter()
router.register("mangas", MangaViewSet, basename="manga")
router.register("chapters", ChapterViewSet, basename="chapter")
router.register("bookmarks", BookmarkViewSet, basename="bookmark")
router.register("library/series", SeriesViewSet, basename="series")

urlpatterns = [
    path("pages/<str:pk>/image/", PageImageView.as_view(), name="page-image"),
    path("auth/token/", TokenView.as_view(), name="auth-token"),
    path("library/series/merge/", series.MergeView.as_view(), name="series-merge"),
    path("library/series/split/", series.SplitView.as_view(), name="series-split"),
    path("library/series/changes/", series.ChangeList.as_view(), name="series-changes"),
    path("library/series/changes/<uuid:pk>/undo/", series.UndoView.as_view(), name="series-undo"),
    path("library/series/suggestions/", series.SuggestionList.as_view(), name="series-suggestions"),
    path(
        "library/series/suggestions/<uuid:pk>/confirm/",
        series.SuggestionDecisionView.as_view(decision="confirm"),
        name="series-suggestion-confirm",
    ),
    path(
        "library/series/suggestions/<uuid:pk>/reject/",
        series.SuggestionDecisionView.as_view(decision="reject"),
        name="series-suggestion-reject",
    ),
    path("library/series/<uuid:pk>/source-order/", series.SourceOrderView.as_view(), name="series-source-order"),
    path("library/series/<uuid:pk>/alternates/", series.AlternatesView.as_view(), name="series-alternates"),
    *router.urls,
]
