"""Signed URLs for the reader who is asking: a page's, or a chapter's PSE stream (catalog/serving/signing.py).

Called by a view after its own permission check, so a URL is only ever
minted for a page its reader was just allowed to see. Nothing is minted for
an anonymous reader (the library open to everyone has no one to sign for),
with `SERVE_SIGNED_URLS` off, or on S3 storage (the lean handler reads local
files; S3 keeps its own route): the view then keeps its ordinary URL.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage, default_storage

from catalog.serving.signing import page_path, pse_path


def _signer(user: Any) -> int | None:
    """The user id a URL is signed for, or None when nothing is to be signed."""
    if not settings.SERVE_SIGNED_URLS or not getattr(user, "is_authenticated", False):
        return None
    if not isinstance(default_storage, FileSystemStorage) or not isinstance(user.pk, int):
        return None
    return user.pk


def signed_page_url(page: Any, user: Any) -> str | None:
    """The signed path of `page` (with `image`, `content_type`, `sha256`) as stored, for `user`; None: none."""
    who = _signer(user)
    if who is None:
        return None
    return page_path(
        settings.SERVE_SIGNING_KEY,
        name=page.image.name,
        etag=page.sha256,
        content_type=page.content_type,
        user=who,
        now=time.time(),
        lifetime=settings.SERVE_SIGNED_URL_TTL,
        nginx=settings.SERVE_SIGNED_BY_NGINX,
    )


def signed_stream_path(chapter_id: Any, user: Any) -> str | None:
    """The signed PSE path of a chapter for `user`, ending in "/" (the page number and "/" follow); None: none."""
    who = _signer(user)
    if who is None:
        return None
    return pse_path(
        settings.SERVE_SIGNING_KEY,
        chapter=str(chapter_id),
        user=who,
        now=time.time(),
        lifetime=settings.SERVE_SIGNED_URL_TTL,
    )
