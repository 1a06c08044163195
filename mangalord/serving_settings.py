"""The settings of signed page URLs (catalog/serving/signing.py, docs/serving.md#signed-page-urls).

Read from the environment like every setting and made part of the settings by `mangalord/settings.py`,
which unpacks them once SECRET_KEY is known. Each is documented in `.env.example`.
"""

import hashlib
import hmac
import re

from mangalord.env_readers import env, invalid, read, strict_bool

# A key nginx's configuration can hold as written: no quote, no `$`, no space.
_KEY = re.compile(r"^[A-Za-z0-9_-]{32,}$")


def derived_key(secret: str) -> str:
    """The signing key when none is set: from SECRET_KEY, but never SECRET_KEY itself (nor telling anything of it)."""
    return hmac.new(secret.encode(), b"mangalord signed page URLs", hashlib.sha256).hexdigest()


def signing_settings(secret: str) -> tuple[bool, str, int, bool]:
    """SERVE_SIGNED_URLS, SERVE_SIGNING_KEY, SERVE_SIGNED_URL_TTL and SERVE_SIGNED_BY_NGINX, read and checked;
    `secret` is SECRET_KEY."""
    enabled = read("SERVE_SIGNED_URLS", strict_bool, True)
    given = read(
        "SERVE_SIGNING_KEY",
        env.str,
        "",
        lambda v: not v or bool(_KEY.match(v)),
        "must be empty (a key derived from SECRET_KEY) or at least 32 letters, digits, '_' or '-'",
    )
    lifetime = read(
        "SERVE_SIGNED_URL_TTL", env.int, 3600, lambda v: 60 <= v <= 7 * 86400, "must be seconds from 60 to 604800"
    )
    by_nginx = read("SERVE_SIGNED_BY_NGINX", strict_bool, False)
    if by_nginx and not given:
        raise invalid("SERVE_SIGNED_BY_NGINX", "needs SERVE_SIGNING_KEY set: nginx's configuration holds the same key")
    return enabled, given or derived_key(secret), lifetime, by_nginx
