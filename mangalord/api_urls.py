"""`/api/v1/`, composed in one place: each app's route list, in the order Django tries them.

The operator API (console) first under its own prefix, then the library API
(catalog), read progress (reader) and the Komga-compatible routes, which sit
beside ours: none of their paths is one of ours (`reader.komga.urls`). Each
list keeps its namespace, so every reversed name is the one it always was.
"""

from django.urls import URLPattern, URLResolver, include, path

from reader.komga import urls as komga_urls

v1: list[URLPattern | URLResolver] = [
    path("admin/crawler/", include("console.api.urls")),
    path("", include("catalog.api.urls")),
    path("", include("reader.api_urls")),
    path("", include("notify.api_urls")),
    path("", include((komga_urls.v1, "komga"), namespace="komga-v1")),
]
