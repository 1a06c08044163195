"""Which media servers to ask for a library rescan after an export: read from settings, each mistake naming its key.

A target is on when any of its three settings (URL, API key, library id) is
set, and then all three must be: a half-configured target is an operator's
typo to report at start-up, not a rescan that silently never happens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

KOMGA = "komga"
KAVITA = "kavita"
SERVERS = (KOMGA, KAVITA)


@dataclass(frozen=True)
class RescanTarget:
    server: str  # KOMGA or KAVITA
    url: str  # base URL, no trailing slash
    api_key: str
    library_id: str

    def __repr__(self) -> str:  # the key never reaches a log line or a traceback
        return f"RescanTarget({self.server!r}, {self.url!r}, library {self.library_id!r})"


def setting_names(server: str) -> tuple[str, str, str]:
    prefix = server.upper()
    return f"{prefix}_SCAN_URL", f"{prefix}_SCAN_API_KEY", f"{prefix}_SCAN_LIBRARY_ID"


def rescan_targets(values: Mapping[str, str]) -> tuple[RescanTarget, ...]:
    """The configured targets from `values` (environment-like: name -> raw string); ImproperlyConfigured names the key."""
    targets = []
    for server in SERVERS:
        names = setting_names(server)
        url, key, library = (values.get(name, "").strip() for name in names)
        if not (url or key or library):
            continue
        for name, value in zip(names, (url, key, library), strict=True):
            if not value:
                others = ", ".join(n for n in names if n != name)
                raise ImproperlyConfigured(f"{name} must be set too when {others} is set ({server} library rescans)")
        targets.append(RescanTarget(server, _base_url(names[0], url), key, _library_id(server, names[2], library)))
    return tuple(targets)


def _base_url(name: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ImproperlyConfigured(
            f"{name}={url!r} must be the server's http(s) address, such as http://komga.lan:25600"
        )
    return url.rstrip("/")


def _library_id(server: str, name: str, value: str) -> str:
    # Kavita's ids are positive integers (its API refuses anything else); Komga's are opaque strings.
    if server == KAVITA and not (value.isdigit() and int(value) > 0):
        raise ImproperlyConfigured(f"{name}={value!r} must be a positive integer (Kavita's library id)")
    if server == KOMGA and ("/" in value or "?" in value or "#" in value):
        raise ImproperlyConfigured(
            f"{name}={value!r} must be the library's id as Komga shows it, such as 0B9GTMZ05M4JH"
        )
    return value
