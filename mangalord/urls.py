from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/crawler/", include("crawler.status.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/admin/crawler/", include("crawler.api.urls")),
    path("api/v1/", include("catalog.api.urls")),
    path("api/v1/", include("reader.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("opds/", include("reader.opds_urls")),
    path("", include("reader.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
