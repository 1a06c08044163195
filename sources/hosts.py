"""Which origins a source may fetch from: its own host and its configured image hosts (the SSRF guard).

A chapter page is source-controlled text; without this check a crafted
`<img src="http://10.0.0.5/admin">` would make the crawler fetch internal
URLs. Every URL is checked before any request is made, including each
redirect hop. Names are compared here; the addresses they resolve to are
checked when the connection is made (`fetch.outbound`), so a host
name allowed here still cannot reach loopback or private addresses.

It stays with the adapters, not in `fetch`: the names it allows are a
source's settings (its base URL, its `image_hosts`), and what it raises are
the crawler's error kinds (a bad entry is the source's configuration error).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from fetch import outbound
from sources.errors import FetchRefused, SourceConfigError

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class HostRule:
    """One allowed host: exact or `*.suffix`, on one port or (port None) the scheme's default port."""

    host: str
    port: int | None
    wildcard: bool = False

    def matches(self, host: str, port: int, default_port: int) -> bool:
        if self.port is None and port != default_port:
            return False
        if self.port is not None and port != self.port:
            return False
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host


def parse_host_rule(entry: str) -> HostRule:
    """Parse an `image_hosts` entry: `cdn.example.com`, `cdn.example.com:8443`, `*.example.com`, or a URL."""
    text = entry.strip().lower()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError as exc:
        raise SourceConfigError(f"image_hosts entry {entry!r} has a bad port") from exc
    host = parts.hostname or ""
    wildcard = host.startswith("*.")
    host = host.removeprefix("*.")
    if not host or "*" in host or parts.path not in ("", "/") or parts.username:
        raise SourceConfigError(f"image_hosts entry {entry!r} is not a host name (like cdn.example.com[:port])")
    try:
        outbound.check_literal(host)  # `127.0.0.1:6379`, `169.254.169.254`: refused now, not at the first image
    except outbound.AddressRefused as exc:
        raise SourceConfigError(f"image_hosts entry {entry!r} is refused: {exc}") from exc
    return HostRule(host=host, port=port, wildcard=wildcard)


class HostGuard:
    """Allows the source's own origin (host and port of its base URL) plus its image host rules."""

    def __init__(self, source_id: str, base_url: str, image_hosts: tuple[str, ...] = ()) -> None:
        base = urlsplit(base_url)
        if base.scheme not in _DEFAULT_PORTS or not base.hostname:
            raise SourceConfigError(f"source {source_id!r}: base_url {base_url!r} must be an http(s) URL")
        self.source_id = source_id
        self._rules = (HostRule(base.hostname, base.port or _DEFAULT_PORTS[base.scheme]),) + tuple(
            parse_host_rule(entry) for entry in image_hosts
        )

    def allows(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            return False
        try:
            port = parts.port or _DEFAULT_PORTS[parts.scheme]
        except ValueError:
            return False
        default = _DEFAULT_PORTS[parts.scheme]
        return any(rule.matches(parts.hostname, port, default) for rule in self._rules)

    def check(self, url: str, *, what: str = "URL") -> str:
        """Return `url` when allowed, else raise FetchRefused (no request is made).

        A host that spells a refused address (`127.0.0.1`, `0177.0.0.1`,
        `[::ffff:7f00:1]`) is refused here already, without a lookup; names
        are checked by the transports when they connect.
        """
        if not self.allows(url):
            raise FetchRefused(
                f"source {self.source_id!r}: refusing to fetch {what} {url!r}: "
                "not on the source's own host or its configured image_hosts"
            )
        try:
            outbound.check_literal(urlsplit(url).hostname or "")
        except outbound.AddressRefused as exc:
            raise FetchRefused(f"source {self.source_id!r}: refusing to fetch {what} {url!r}: {exc}") from exc
        return url
