"""Who may call the admin crawler API: authenticated, active staff only.

Token authentication comes first in `API_AUTHENTICATION` on purpose: DRF
answers an unauthenticated request with 401 only when the first
authentication class can name a `WWW-Authenticate` challenge, and
SessionAuthentication cannot (it would turn every anonymous call into a
misleading 403). Browsers still authenticate with their session cookie, and
SessionAuthentication keeps enforcing Django's CSRF check for them.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import BasePermission

API_AUTHENTICATION = (TokenAuthentication, SessionAuthentication)


class IsStaffOperator(BasePermission):
    """Allows active staff users. Anonymous gets 401 (via the authenticators), others 403."""

    message = "Crawler administration needs a staff account."

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_active and user.is_staff)
