"""Signed page URLs: minted after a reader's permission check, checked later without a session, a user or a query.

A page request through Django costs its request cycle (middleware, session,
user) whatever the page: about 1.5 ms of CPU here, most of a page's cost.
So the view that already decided a reader may read a chapter (the web
reader's chapter page, a manga's OPDS feed) hands out URLs that carry that
decision: what (a page's storage name and ETag, or a PSE chapter), who (the
user id), and until when, under a MAC. The lean handler in the web process
(mangalord/signed_routes.py), or nginx itself, checks the MAC and the expiry
and serves the bytes. Whoever holds such a URL can read that one page (or
that chapter's pages) until it expires: revoking a reader takes effect on
these URLs only when they expire (the lifetime plus at most one window).

Two MAC forms over the same message:

- HMAC-SHA256 with `SERVE_SIGNING_KEY` (the default, and always for PSE);
- MD5 over "message key", the form nginx's secure_link module computes
  (`secure_link_md5`), used for web reader pages only when nginx checks them
  itself (`SERVE_SIGNED_BY_NGINX`). nginx has no HMAC; MD5's known weakness
  is collisions between inputs an attacker chooses, and here every signed
  input (expiry, user id, ETag, an id-made storage name) is the server's.

The expiry is rounded up to a window (a quarter of the lifetime), so a
chapter page rendered twice in one window names the same URLs and the
browser's cache keeps working. Only storage names made of plain segments
(`[A-Za-z0-9_-]`, one known image extension) are ever signed: nothing that
could climb out of MEDIA_ROOT, and nothing nginx would normalise or decode
differently from us. Everything here is pure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

PAGE_PREFIX = "/signed/pages/"
PSE_PREFIX = "/signed/pse/"
# The one type each extension is served as, here and in nginx's `types` block (docs/serving.md).
EXTENSION_TYPES = {
    "jpg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
    "gif": "image/gif",
    "avif": "image/avif",
}
MAX_USER_ID = 2**63 - 1

_NAME = re.compile(r"^[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.(jpg|png|webp|gif|avif)$")
_ETAG = re.compile(r"^[0-9a-f]{64}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_MAC = r"(?P<mac>[A-Za-z0-9_-]{22}|[A-Za-z0-9_-]{43})"
_PAGE_PATH = re.compile(
    "^" + re.escape(PAGE_PREFIX) + _MAC + r"/(?P<expires>[0-9]{1,12})/(?P<user>[1-9][0-9]{0,18})"
    r"/(?P<etag>[0-9a-f]{64})/(?P<name>[A-Za-z0-9_/.-]{1,300})$"
)
_PSE_PATH = re.compile(
    "^" + re.escape(PSE_PREFIX) + _MAC + r"/(?P<expires>[0-9]{1,12})/(?P<user>[1-9][0-9]{0,18})"
    r"/(?P<chapter>[0-9a-f-]{36})/(?P<number>[0-9]{1,6})/$"
)


class Refused(Exception):
    """A signed URL that opens nothing: `status` 404 (not a signed URL at all) or 403 (forged or expired).

    The message never says which check failed."""

    def __init__(self, status: int) -> None:
        super().__init__("Not found." if status == 404 else "Forbidden.")
        self.status = status


@dataclass(frozen=True)
class SignedPage:
    """What a page URL opens: the stored file `name`, served as `content_type` with ETag `etag`."""

    user: int
    etag: str
    name: str
    expires: int

    @property
    def content_type(self) -> str:
        return EXTENSION_TYPES[self.name.rsplit(".", 1)[1]]


@dataclass(frozen=True)
class SignedChapter:
    """What a PSE URL opens: page `number` (0-based) of chapter `chapter`, read by `user`."""

    user: int
    chapter: str
    number: int
    expires: int


def expiry(now: float, lifetime: int) -> int:
    """When a URL minted at `now` stops opening: at least `lifetime` seconds on, rounded up to a quarter of it."""
    window = max(1, lifetime // 4)
    return -(-(int(now) + lifetime) // window) * window


def signable_name(name: str, content_type: str) -> bool:
    """Whether a page stored under `name` as `content_type` may be handed out as a signed URL (module doc)."""
    match = _NAME.match(name)
    return match is not None and EXTENSION_TYPES[match.group(1)] == content_type


def page_message(expires: int, user: int, etag: str, name: str) -> str:
    return f"pages/{expires}/{user}/{etag}/{name}"


def pse_message(expires: int, user: int, chapter: str) -> str:
    return f"pse/{expires}/{user}/{chapter}"


def mac(key: str, message: str, *, nginx: bool = False) -> str:
    """The URL-safe MAC of `message`: HMAC-SHA256, or nginx's `secure_link_md5 "<message> <key>"`."""
    if nginx:
        digest = hashlib.md5(f"{message} {key}".encode(), usedforsecurity=False).digest()  # noqa: S324 (module doc)
    else:
        digest = hmac.new(key.encode(), message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def page_path(
    key: str, *, name: str, etag: str, content_type: str, user: int, now: float, lifetime: int, nginx: bool = False
) -> str | None:
    """The signed path of a stored page for `user`, or None when this page cannot be signed (an odd name or
    ETag, a name whose extension is not its type, no user)."""
    if not (signable_name(name, content_type) and _ETAG.match(etag) and 0 < user <= MAX_USER_ID):
        return None
    expires = expiry(now, lifetime)
    tail = f"{expires}/{user}/{etag}/{name}"
    return f"{PAGE_PREFIX}{mac(key, page_message(expires, user, etag, name), nginx=nginx)}/{tail}"


def pse_path(key: str, *, chapter: str, user: int, now: float, lifetime: int) -> str | None:
    """The signed path of a chapter's PSE stream for `user`, ending in "/": the page number and "/" follow."""
    chapter = str(chapter)
    if not (_UUID.match(chapter) and 0 < user <= MAX_USER_ID):
        return None
    expires = expiry(now, lifetime)
    return f"{PSE_PREFIX}{mac(key, pse_message(expires, user, chapter))}/{expires}/{user}/{chapter}/"


def verify_page(path: str, key: str, now: float, *, nginx: bool = False) -> SignedPage:
    """The page a signed path opens; `Refused` when it is not one (404), or is forged or expired (403)."""
    match = _PAGE_PATH.match(path)
    if match is None:
        raise Refused(404)
    expires, user, etag, name = int(match["expires"]), int(match["user"]), match["etag"], match["name"]
    _check(match["mac"], mac(key, page_message(expires, user, etag, name), nginx=nginx), expires, now)
    if not _NAME.match(name):  # never signed: only a forged URL names one
        raise Refused(403)
    return SignedPage(user, etag, name, expires)


def verify_pse(path: str, key: str, now: float) -> SignedChapter:
    """The chapter page a signed PSE path opens; `Refused` as `verify_page`."""
    match = _PSE_PATH.match(path)
    if match is None or not _UUID.match(match["chapter"]):
        raise Refused(404)
    expires, user, chapter = int(match["expires"]), int(match["user"]), match["chapter"]
    _check(match["mac"], mac(key, pse_message(expires, user, chapter)), expires, now)
    return SignedChapter(user, chapter, int(match["number"]), expires)


def _check(given: str, expected: str, expires: int, now: float) -> None:
    """The MAC first, in constant time; then the expiry. Both refusals look the same."""
    if not hmac.compare_digest(given.encode(), expected.encode()) or now >= expires:
        raise Refused(403)
