"""How every API request authenticates: token first, then the browser session.

Token authentication comes first on purpose: DRF answers an unauthenticated
request with 401 only when the first authentication class can name a
`WWW-Authenticate` challenge, and SessionAuthentication cannot (it would turn
every anonymous call into a misleading 403). Browsers still authenticate with
their session cookie, and SessionAuthentication keeps enforcing Django's CSRF
check for them.
"""

from typing import Any

from rest_framework.authentication import SessionAuthentication, TokenAuthentication

# One list shared by every API view's `authentication_classes`; apps above the
# catalog append their own ways in from AppConfig.ready() (the reader adds API keys).
API_AUTHENTICATION: list[Any] = [TokenAuthentication, SessionAuthentication]


def accept_also(authentication_class: Any) -> None:
    """Let every library API view authenticate with `authentication_class` too, after token and session."""
    if authentication_class not in API_AUTHENTICATION:
        API_AUTHENTICATION.append(authentication_class)
