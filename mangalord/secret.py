"""Where the SECRET_KEY comes from: the environment, or a key generated once per data directory.

A newcomer's `manage.py demo` needs no configuration, yet a server must never
sign sessions with a key everyone can read in our repository. So with no
SECRET_KEY set, a random key is generated on first start and kept (mode 0600)
in the data directory, surviving restarts. A known development key, or one too
short to be a secret, is refused unless DEBUG is on. Several web hosts must
share one key: set SECRET_KEY on each of them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Keys that have been published (the old default of `.env.example`) or that
# Django's own startproject marks as insecure.
KNOWN_INSECURE = ("insecure-dev-key-change-me",)
INSECURE_PREFIX = "django-insecure-"
MIN_LENGTH = 50  # Django's check --deploy (security.W009) asks for at least 50 characters
KEY_FILE = "secret_key"


def is_insecure(key: str) -> bool:
    return key in KNOWN_INSECURE or key.startswith(INSECURE_PREFIX) or len(key) < MIN_LENGTH or len(set(key)) < 5


def secret_key(configured: str, *, debug: bool, data_dir: Path) -> str:
    """The key to use: `configured` if set (refused when insecure outside DEBUG), else the data directory's."""
    if configured:
        if is_insecure(configured) and not debug:
            raise ImproperlyConfigured(
                "Invalid value for environment variable SECRET_KEY: it is a published or too-short development key "
                f"(fewer than {MIN_LENGTH} characters or a known default) and DEBUG is off. Set SECRET_KEY to a long "
                'random value (python -c "import secrets; print(secrets.token_urlsafe(50))"), or unset it to use '
                f"the key generated in {data_dir / KEY_FILE}."
            )
        return configured
    return _stored_key(data_dir / KEY_FILE)


def _stored_key(path: Path) -> str:
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(50))
    try:
        # A hard link appears whole or not at all and refuses to replace: when
        # several processes start at once, the first key linked wins for all.
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text().strip()
