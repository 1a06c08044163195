"""DRF face of `reader.auth.reader_user`: the one way a reader app's API request is authenticated.

Session, `X-API-Key`, or HTTP Basic with a password or an API key, exactly as
OPDS accepts them. Its `authenticate_header` makes DRF answer an anonymous
request with 401 and a Basic challenge, which clients such as Mihon wait for
before they send credentials. A browser session still passes Django's CSRF
check on unsafe methods.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request

from reader.auth import REALM, reader_user


class ReaderAuthentication(SessionAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, None] | None:
        django_request = request._request
        session_user = getattr(django_request, "user", None)
        user = reader_user(django_request)
        if user is None:
            return None
        if session_user is not None and session_user.is_authenticated and user == session_user:
            self.enforce_csrf(request)
        return user, None

    def authenticate_header(self, request: Request) -> str:
        return f'Basic realm="{REALM}", charset="UTF-8"'


class ReaderAuthenticationScheme(OpenApiAuthenticationExtension):
    """How our API documentation names `ReaderAuthentication`: HTTP Basic (password or key) or `X-API-Key`."""

    target_class = ReaderAuthentication
    name = "readerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "basic",
            "description": "HTTP Basic with your password or one of your API keys; or the key in an X-API-Key header.",
        }
