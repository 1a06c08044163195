"""Komga API routes, mounted at /api/v1/ and /api/v2/ beside ours (no path of one is a path of the other)."""

from django.urls import path

from reader.komga import views as v

app_name = "komga"

v1 = [
    path("series", v.SeriesList.as_view(), name="series"),
    path("series/<str:series_id>", v.SeriesDetail.as_view(), name="series-detail"),
    path("series/<str:series_id>/books", v.SeriesBooks.as_view(), name="series-books"),
    path("series/<str:series_id>/thumbnail", v.SeriesThumbnail.as_view(), name="series-thumbnail"),
    path("series/<str:series_id>/read-progress", v.SeriesReadProgress.as_view(), name="series-read-progress"),
    path("books/<str:book_id>", v.BookDetail.as_view(), name="book"),
    path("books/<str:book_id>/pages", v.BookPages.as_view(), name="book-pages"),
    path("books/<str:book_id>/pages/<int:number>", v.BookPage.as_view(), name="book-page"),
    path("books/<str:book_id>/thumbnail", v.BookThumbnail.as_view(), name="book-thumbnail"),
    path("books/<str:book_id>/read-progress", v.BookReadProgress.as_view(), name="book-read-progress"),
    path("libraries", v.Libraries.as_view(), name="libraries"),
    path("libraries/<str:library_id>", v.LibraryDetail.as_view(), name="library"),
    path("genres", v.Genres.as_view(), name="genres"),
    path("tags", v.NoValues.as_view(), name="tags"),
    path("publishers", v.NoValues.as_view(), name="publishers"),
    path("authors", v.Authors.as_view(), name="authors"),
    path("collections", v.EmptyPage.as_view(), name="collections"),
    path("readlists", v.EmptyPage.as_view(), name="readlists"),
]

v2 = [
    path("series/<str:series_id>/read-progress/tachiyomi", v.TachiyomiProgress.as_view(), name="tachiyomi"),
    path("authors", v.AuthorsV2.as_view(), name="authors-v2"),
    path("genres", v.Genres.as_view(), name="genres-v2"),
    path("tags", v.NoValues.as_view(), name="tags-v2"),
    path("publishers", v.NoValues.as_view(), name="publishers-v2"),
    path("users/me", v.Me.as_view(), name="me"),
]
