"""The web reader at "/": library, manga pages, the chapter reader, login."""

from django.contrib.auth import views as auth_views
from django.urls import path

from reader import account_views, web_views

app_name = "reader"

urlpatterns = [
    path("", web_views.library, name="library"),
    path("login/", auth_views.LoginView.as_view(template_name="reader/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="reader:login"), name="logout"),
    path("mangas/<uuid:manga_id>/", web_views.manga_detail, name="manga"),
    path("mangas/<uuid:manga_id>/bookmark/", web_views.bookmark_toggle, name="bookmark"),
    path("read/<uuid:chapter_id>/", web_views.chapter_reader, name="chapter"),
    path("read/<uuid:chapter_id>/mark/", web_views.mark_chapter, name="mark-chapter"),
    path("read/<uuid:chapter_id>/read-up-to/", web_views.mark_read_up_to, name="read-up-to"),
    path("theme/", web_views.choose_theme, name="theme"),
    path("read/pages/<uuid:page_id>/image/", web_views.scaled_page, name="page-image"),
    path("account/", account_views.account, name="account"),
    path("account/keys/<int:key_id>/revoke/", account_views.revoke_key, name="revoke-key"),
]
