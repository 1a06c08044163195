"""Base classes of the admin crawler API: staff read, operators control; token or session authentication."""

from rest_framework.views import APIView

from catalog.api.inputs import BoundedJSONParser
from console.api.permissions import API_AUTHENTICATION, CanOperateCrawler, IsCrawlerStaff


class StaffOnly:
    """Mixin for any DRF view under `/api/v1/admin/` that reads.

    JSON bodies only: a cross-site page can send a form without a CORS
    preflight, but not `application/json`, which keeps one more door shut.
    """

    authentication_classes = API_AUTHENTICATION
    permission_classes: tuple[type, ...] = (IsCrawlerStaff,)
    parser_classes = (BoundedJSONParser,)


class AdminAPIView(StaffOnly, APIView):
    pass


class ControlAPIView(AdminAPIView):
    """A crawler control: the operator permission on top of staff authentication."""

    permission_classes = (CanOperateCrawler,)
