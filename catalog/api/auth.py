"""How every API request authenticates: token first, then the browser session.

Token authentication comes first on purpose: DRF answers an unauthenticated
request with 401 only when the first authentication class can name a
`WWW-Authenticate` challenge, and SessionAuthentication cannot (it would turn
every anonymous call into a misleading 403). Browsers still authenticate with
their session cookie, and SessionAuthentication keeps enforcing Django's CSRF
check for them.
"""

from rest_framework.authentication import SessionAuthentication, TokenAuthentication

API_AUTHENTICATION = (TokenAuthentication, SessionAuthentication)
