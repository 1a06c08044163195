"""OPDS 1.2 catalog, PSE pages and CBZ downloads under /opds/."""

from django.urls import path

from reader import download_views, opds_views

app_name = "opds"

urlpatterns = [
    path("", opds_views.root, name="root"),
    path("latest/", opds_views.latest, name="latest"),
    path("all/", opds_views.all_mangas, name="all"),
    path("bookmarks/", opds_views.bookmarks, name="bookmarks"),
    path("tags/", opds_views.tag_list, name="tags"),
    path("tags/<int:tag_id>/", opds_views.tag_feed, name="tag"),
    path("search/", opds_views.search, name="search"),
    path("opensearch.xml", opds_views.opensearch, name="opensearch"),
    path("mangas/<uuid:manga_id>/", opds_views.manga_feed, name="manga"),
    path("mangas/<uuid:manga_id>/thumbnail/", opds_views.thumbnail, name="thumbnail"),
    path("chapters/<uuid:chapter_id>/cbz/", download_views.chapter_cbz, name="cbz"),
    path("chapters/<uuid:chapter_id>/pages/<int:number>/", opds_views.page_stream, name="page"),
]
