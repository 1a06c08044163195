"""Who may call the admin crawler API: authenticated, active staff only.

Authentication is the library API's (`catalog.api.auth.API_AUTHENTICATION`):
token first so anonymous calls get 401, then the session with its CSRF check.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from catalog.api.auth import API_AUTHENTICATION

__all__ = ["API_AUTHENTICATION", "IsStaffOperator"]


class IsStaffOperator(BasePermission):
    """Allows active staff users. Anonymous gets 401 (via the authenticators), others 403."""

    message = "Crawler administration needs a staff account."

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_active and user.is_staff)
