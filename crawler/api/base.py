"""Base classes of the admin crawler API: staff only, token or session authentication."""

from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from crawler.api.permissions import API_AUTHENTICATION, IsStaffOperator


class StaffOnly:
    """Mixin for any DRF view under `/api/v1/admin/`.

    JSON bodies only: a cross-site page can send a form without a CORS
    preflight, but not `application/json`, which keeps one more door shut.
    """

    authentication_classes = API_AUTHENTICATION
    permission_classes = (IsStaffOperator,)
    parser_classes = (JSONParser,)


class AdminAPIView(StaffOnly, APIView):
    pass
