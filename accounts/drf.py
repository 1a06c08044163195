"""The access policy in Django REST Framework's terms: authentication and permission classes for API views.

Header credentials come first on purpose: DRF answers an unauthenticated
request with 401 only when the first authentication class can name a
`WWW-Authenticate` challenge, and SessionAuthentication cannot (it would turn
every anonymous call into a misleading 403). Browsers still authenticate with
their session cookie, and SessionAuthentication keeps enforcing Django's CSRF
check for them. A locked-out request is answered 429 with `Retry-After`.

Reader apps that send credentials only after a `WWW-Authenticate: Basic`
challenge (Mihon's Komga extension, Komelia) use `READER_APP_AUTHENTICATION`:
the same credentials, challenged with Basic.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from accounts import credentials, policy

# The API schema's description of these credentials (drf-spectacular finds it by subclass), registered with
# the class it describes: only processes that serve the API load either, never a worker.
from accounts import schema as _schema  # noqa: F401


class HeaderCredentialsAuthentication(BaseAuthentication):
    """Any header scheme of `accounts.credentials` (Basic, Token, registered ones), lockout included.

    `challenge` is the `WWW-Authenticate` value of a 401: `Token` for our API
    (a browser meeting `Basic` would pop up its own password dialog); a
    protocol whose clients expect Basic sets it in a subclass.
    """

    challenge = "Token"

    def authenticate(self, request: Request) -> tuple[Any, None] | None:
        try:
            user = credentials.header_user(request._request)
        except policy.LockedOut as exc:
            raise Throttled(wait=exc.retry_after_secs, detail=str(exc)) from exc
        except policy.InvalidCredentials as exc:
            raise AuthenticationFailed(str(exc)) from exc
        return (user, None) if user is not None else None

    def authenticate_header(self, request: Request) -> str:
        return self.challenge


API_AUTHENTICATION = (HeaderCredentialsAuthentication, SessionAuthentication)


class BasicChallengeAuthentication(HeaderCredentialsAuthentication):
    challenge = credentials.BASIC_CHALLENGE


READER_APP_AUTHENTICATION = (BasicChallengeAuthentication, SessionAuthentication)


class CanReadLibrary(BasePermission):
    """Reads of the library by whoever the policy lets read (`accounts.policy.may_read_library`)."""

    message = "Reading the library needs an account."

    def has_permission(self, request: Request, view: Any) -> bool:
        return request.method in SAFE_METHODS and policy.may_read_library(request.user)
