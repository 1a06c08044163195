"""Who may read through OPDS and CBZ: the access policy (`accounts.policy`) with an HTTP Basic challenge.

OPDS clients (KOReader, Panels, Chunky) speak HTTP Basic and expect a 401
with a `WWW-Authenticate: Basic` challenge before they ask the user for a
password; browsers already carry a session cookie. Inactive users, wrong
passwords and unknown users all get the challenge; a locked-out account or
address gets 429 (`accounts.lockout`).
"""

from __future__ import annotations

from django.http import HttpResponse

from accounts.credentials import BASIC_CHALLENGE
from accounts.views import library_reader_required


def challenge() -> HttpResponse:
    response = HttpResponse("Authentication required.\n", status=401, content_type="text/plain; charset=utf-8")
    response["WWW-Authenticate"] = BASIC_CHALLENGE
    return response


reader_required = library_reader_required(challenge)
"""View decorator: `request.user` is the reader (a user, or AnonymousUser while reads are public), else 401 + Basic."""
