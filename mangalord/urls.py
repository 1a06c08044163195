from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from mangalord import api_urls, signed_views
from mangalord.favicon import favicon
from reader.komga import urls as komga_urls

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("admin/crawler/", include("console.dashboard.urls")),
    path("admin/verify/", include("upkeep.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_urls.v1)),
    path("api/v2/", include((komga_urls.v2, "komga"), namespace="komga-v2")),
    path("kosync/", include("reader.kosync.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("opds/", include("reader.opds_urls")),
    # Signed page URLs; the web process answers them before Django (mangalord/signed_routes.py).
    path("signed/<path:rest>", signed_views.signed, name="signed"),
    # Before the reader's routes: the account page's notifications section is notify's.
    path("account/notifications/", include("notify.urls")),
    path("", include("reader.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
