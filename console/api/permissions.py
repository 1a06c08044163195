"""Who may call the admin crawler API: staff watch, operators act (`console.control.operators`).

Authentication is the access policy's (`accounts.drf.API_AUTHENTICATION`):
header credentials first so anonymous calls get 401, then the session with
its CSRF check.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from accounts.drf import API_AUTHENTICATION
from console.control.operators import OPERATE_CRAWLER, can_operate, can_watch

__all__ = ["API_AUTHENTICATION", "CanOperateCrawler", "IsCrawlerStaff"]


class IsCrawlerStaff(BasePermission):
    """Active staff (or operators). Anonymous gets 401 (via the authenticators), others 403."""

    message = "Crawler administration needs a staff account."

    def has_permission(self, request: Any, view: Any) -> bool:
        return can_watch(request.user)


class CanOperateCrawler(BasePermission):
    """Users holding `crawler.operate_crawler` (superusers, the Operators group)."""

    message = f"Crawler control needs the {OPERATE_CRAWLER} permission (the Operators group)."

    def has_permission(self, request: Any, view: Any) -> bool:
        return can_operate(request.user)
