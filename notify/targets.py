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

# Services that are mostly self-hosted (ntfy, Gotify, any webhook): their host must resolve when the URL is added,
# or the URL is a typo. Every service that connects to a host the URL names is checked by the outbound rule, listed
# here or not (`destinations`); a hosted service (Discord, Telegram...) posts to its own fixed API instead.
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


def destinations(plugin: Any, scheme: str) -> list[tuple[str, int]]:
    """The (host, port) pairs the Apprise service of a `scheme`:// URL connects to; none for a hosted service.

    A hosted service's class carries the fixed address of its public API (`notify_url` and the like: Discord,
    Telegram, Pushover...), and the "host" in its URL is an identifier (a webhook id, a bot token). Every other
    service (Matrix, Mattermost, Rocket.Chat, Home Assistant, Kodi, a webhook...) connects to the URL's host, and an
    email service to its SMTP server too; so do the self-hosted schemes whatever cloud default they carry. Pure:
    reads the service object only.
    """
    if scheme not in SELF_HOSTED_SCHEMES and _posts_to_its_own_api(type(plugin)):
        return []
    secure = bool(getattr(plugin, "secure", False))
    found = []
    host = getattr(plugin, "host", None)
    if host:
        found.append((str(host), int(getattr(plugin, "port", None) or (443 if secure else 80))))
    smtp_host = getattr(plugin, "smtp_host", None)
    if smtp_host:
        found.append((str(smtp_host), int(getattr(plugin, "port", None) or 25)))
    return found


# Class attributes that are Apprise's documentation links, not where a service posts.
_DOCUMENTATION_ATTRS = frozenset({"service_url", "setup_url", "image_url"})


def _posts_to_its_own_api(plugin_class: type) -> bool:
    """Whether the service's class names a fixed https address of its own: the API every message goes to."""
    return any(
        isinstance(value, str) and value.startswith("https://") and name not in _DOCUMENTATION_ATTRS
        for cls in plugin_class.__mro__
        for name, value in vars(cls).items()
    )


def check_destination(url: str) -> None:
    """Refuse a URL whose service would connect to a loopback, private or reserved address.

    The same rule as every crawl fetch (`fetch.outbound`, OUTBOUND_ALLOWED_NETWORKS): a user's notification URL
    must not make the server post to the database port or a cloud metadata address. A host that does not resolve
    is refused for a self-hosted service (UnresolvedHost: retried when sending); for another service the URL is
    kept (its "host" may be an identifier its API reads) and checked again before every message is sent.
    """
    plugin = service(url)
    scheme = scheme_of(url)
    for host, port in destinations(plugin, scheme):
        try:
            check_every_address(host, port)
        except AddressRefused as exc:
            raise BadTarget(f"this {scheme}:// URL is refused: {exc}") from exc
        except OSError as exc:
            if scheme in SELF_HOSTED_SCHEMES:
                raise UnresolvedHost(f"the host of this {scheme}:// URL does not resolve: {exc}") from exc


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
