"""Notification URLs: checked by Apprise itself, shown masked, and refused when they point inside the network.

Apprise knows 100+ services by URL scheme (`ntfys://`, `gotify://`,
`discord://`, `mailtos://`, `json://`...); a URL it cannot turn into a
service is refused with its scheme named. The URL holds the service's
secret, so everything shown is Apprise's own privacy rendering
(`url(privacy=True)`: passwords as `****`, tokens as `a...z`).
"""

from __future__ import annotations

from typing import Any

import apprise
from django.conf import settings

from accounts.api_keys import OPERATOR_PERMISSION
from fetch.outbound import AddressRefused, check_every_address

# Longest URL accepted: Apprise URLs are one line; a page of text is a mistake, not a URL.
MAX_URL_LENGTH = 2000

# Services whose host is whoever the user names (a self-hosted ntfy or Gotify, any webhook): they connect to the URL's
# own host, which the outbound guard must check like every crawl fetch. Hosted services' schemes (discord, tgram...)
# always connect to the service's public API, whatever the URL's "host" (a webhook id, a bot token) is.
SELF_HOSTED_SCHEMES = frozenset(
    {"json", "jsons", "xml", "xmls", "form", "forms", "ntfy", "ntfys", "gotify", "gotifys", "apprise", "apprises"}
)


class BadTarget(ValueError):
    """A notification URL we will not store or send to; the message says what to fix and never repeats the secret."""


class UnresolvedHost(BadTarget):
    """The URL's host does not resolve now: refused when it is added, retried later when a message is sent."""


def scheme_of(url: str) -> str:
    """The URL's scheme, lower case ("" when it has none): what logs and dead letters may show."""
    head, sep, _ = url.partition("://")
    return head.strip().lower()[:32] if sep else ""


def service(url: str) -> Any:
    """Apprise's service object for `url`; BadTarget naming the scheme when Apprise cannot use it."""
    url = url.strip()
    if not url:
        raise BadTarget("enter a notification URL, such as ntfys://ntfy.sh/my-topic")
    if len(url) > MAX_URL_LENGTH:
        raise BadTarget(f"a notification URL is at most {MAX_URL_LENGTH} characters")
    scheme = scheme_of(url)
    if not scheme:
        raise BadTarget("a notification URL starts with its service's scheme, such as ntfys:// or discord://")
    plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if plugin is None:
        raise BadTarget(
            f"Apprise cannot use this {scheme}:// URL: check the scheme and the parts that service needs "
            "(see Apprise's list of services)"
        )
    return plugin


def masked(url: str) -> str:
    """The URL as it may be shown: Apprise's privacy form without its option string."""
    try:
        plugin = service(url)
    except BadTarget:
        return f"{scheme_of(url) or '?'}://…"
    return str(plugin.url(privacy=True)).split("?", 1)[0]


def check_destination(url: str) -> None:
    """Refuse a self-hosted service's URL whose host is a loopback, private or reserved address.

    The same rule as every crawl fetch (`fetch.outbound`, OUTBOUND_ALLOWED_NETWORKS): a user's notification URL
    must not make the server post to the database port or a cloud metadata address.
    """
    plugin = service(url)
    if scheme_of(url) not in SELF_HOSTED_SCHEMES:
        return
    host = getattr(plugin, "host", None)
    if not host:
        return
    port = getattr(plugin, "port", None) or (443 if getattr(plugin, "secure", False) else 80)
    try:
        check_every_address(host, int(port))
    except AddressRefused as exc:
        raise BadTarget(f"this {scheme_of(url)}:// URL is refused: {exc}") from exc
    except OSError as exc:
        raise UnresolvedHost(f"the host of this {scheme_of(url)}:// URL does not resolve: {exc}") from exc


def validated(url: str) -> str:
    """`url` stripped, when Apprise can use it and its host may be reached; BadTarget otherwise."""
    url = url.strip()
    check_destination(url)
    return url


def may_receive_health_alerts(user: Any) -> bool:
    """Source health is the operators' business: only they may subscribe to it."""
    return bool(user.is_active and user.has_perm(OPERATOR_PERMISSION))


def max_targets() -> int:
    return int(settings.NOTIFY_MAX_TARGETS_PER_USER)
