"""An API key in the catalog URL, as Kavita offers: `/key/<api key>/opds/` for apps that cannot send a password.

The key authenticates the request, the rest of the path is served as
usual, and the script prefix carries the key into every link the response
builds (`reverse()` puts it in front), so an app following the feed's links
stays signed in. Read-only (GET and HEAD) and only the OPDS catalog and the
cover images its feeds link to, whatever the key's scope: a URL ends up in
logs and histories, so the request is treated as a `read` key's even when
the key is `operate` (the operator routes are never under a key path anyway).
The product's logs mask the key (`mangalord.log_masking`). The key is checked by the access policy
(`accounts.credentials.verify_api_key`): a wrong one counts toward the
lockout, and a locked address or account is refused with 429.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import get_script_prefix, set_script_prefix

from accounts import api_keys, credentials, policy
from accounts.views import locked_out

_KEY_PATH = re.compile(r"^/key/(?P<key>[A-Za-z0-9_-]{8,128})/(?P<rest>.*)$")
SERVED = ("opds/", "api/v1/mangas/")


def _plain(status: int, message: str) -> HttpResponse:
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


class ApiKeyPathMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = _KEY_PATH.match(request.path_info)
        if match is None:
            return self.get_response(request)
        if not match["rest"].startswith(SERVED):
            return _plain(404, "A key in the URL opens the OPDS catalog only: /key/<your key>/opds/")
        if request.method not in ("GET", "HEAD"):
            return _plain(405, "A key in the URL only reads.")
        try:
            owner = credentials.verify_api_key(request, match["key"], scheme="key-path")
            request.user = api_keys.narrowed_to_read(owner)
        except policy.LockedOut as exc:
            return locked_out(exc)
        except policy.InvalidCredentials:
            return _plain(401, "Unknown or revoked API key: make a new one on your account page.")
        request.path_info = "/" + match["rest"]
        outer = get_script_prefix()
        set_script_prefix(f"{outer}key/{match['key']}/")
        try:
            return self.get_response(request)
        finally:
            set_script_prefix(outer)
