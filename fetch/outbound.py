"""The outbound rule every fetch obeys: resolve once, check the addresses, connect only to a checked one.

Both HTTP stacks (httpx for pages: `fetch.pinned`; libcurl for
images: `fetch.curl_transfer`) and the browser's request handler
(`fetch.tab`) call here. A name is resolved once and the socket is
opened to the very address that was checked, so a name that answers a public
address to the check and 127.0.0.1 to the connect (DNS rebinding) gains
nothing. Which addresses are refused is `fetch.addresses`; the
operator's exceptions are the OUTBOUND_ALLOWED_NETWORKS setting.

Through an HTTP proxy (from the environment: `fetch.egress`) the proxy
connects, not us: the target name is resolved and every address it has must
pass before the request is sent. The proxy resolves it again, a window this
process cannot close; a proxy that resolves names itself should apply the
same rule.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

from django.conf import settings

from fetch.addresses import IPAddress, IPNetwork, ip_literal, is_localhost_name, refusal

_ADVICE = "OUTBOUND_ALLOWED_NETWORKS allows private targets"


class AddressRefused(Exception):
    """A connection would reach a refused address; nothing was sent. The message names the rule."""


def allowed_networks() -> tuple[IPNetwork, ...]:
    return tuple(settings.OUTBOUND_ALLOWED_NETWORKS)


def refusal_message(host: str, address: IPAddress, kind: str) -> str:
    spelled = host.strip("[]")
    if spelled == str(address):
        return f"{address} is {kind}; {_ADVICE}"
    return f"{spelled} resolves to {address}, {kind}; {_ADVICE}"


def check_address(host: str, address: IPAddress) -> None:
    """Raise AddressRefused when `address` (what `host` resolved to) is not an allowed target."""
    kind = refusal(address, allowed_networks())
    if kind is not None:
        raise AddressRefused(refusal_message(host, address, kind))


def check_literal(host: str) -> None:
    """Refuse a host that spells a refused IP address (or is a localhost name), without any lookup."""
    if is_localhost_name(host):
        for _, local, _ in resolve(host, 0):
            check_address(host, local)
        return
    literal = ip_literal(host)
    if literal is not None:
        check_address(host, literal)


def resolve(host: str, port: int) -> list[tuple[socket.AddressFamily, IPAddress, tuple]]:
    """Every address `host` has, as the system resolver gives them (OSError when it has none)."""
    import ipaddress

    if is_localhost_name(host):
        return [
            (socket.AF_INET, ipaddress.ip_address("127.0.0.1"), ("127.0.0.1", port)),
            (socket.AF_INET6, ipaddress.ip_address("::1"), ("::1", port, 0, 0)),
        ]
    results = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM):
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        results.append((family, ipaddress.ip_address(str(sockaddr[0]).split("%")[0]), sockaddr))
    return results


def allowed_addresses(host: str, port: int) -> list[tuple[socket.AddressFamily, tuple]]:
    """The addresses of `host` we may connect to, in the resolver's order; AddressRefused when none is.

    Addresses that are refused are skipped (a name with a public and a
    private address connects to the public one only).
    """
    resolved = resolve(host, port)
    usable, first_refusal = [], None
    for family, address, sockaddr in resolved:
        try:
            check_address(host, address)
        except AddressRefused as exc:
            first_refusal = first_refusal or exc
            continue
        usable.append((family, sockaddr))
    if not usable and first_refusal is not None:
        raise first_refusal
    return usable


def check_every_address(host: str, port: int) -> None:
    """All of `host`'s addresses must pass (for a request a proxy makes, where we cannot pin one)."""
    for _, address, _ in resolve(host, port):
        check_address(host, address)


def check_url(url: str) -> None:
    """Resolve the URL's host and refuse it when any address it has is refused (the browser's handler).

    OSError when the name does not resolve here: the caller must not let
    another resolver (Chromium's) try a name this rule could not check.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        return  # data:, blob:, about: load nothing from the network
    try:
        port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    except ValueError as exc:
        raise AddressRefused(f"{url!r} has a bad port") from exc
    check_every_address(parts.hostname, port)


# --- the deadline of the request in flight on this thread ------------------------------------------------

_LOCAL = threading.local()


@contextlib.contextmanager
def deadline(secs: float) -> Iterator[float]:
    """Every socket wait on this thread (connect, send, each read) ends by `secs` from now, whatever trickles in.

    The idle timeout bounds one wait; a server sending a byte every few
    seconds never trips it. The guarded streams (`fetch.pinned`)
    shorten each wait to what is left of this deadline.
    """
    previous = getattr(_LOCAL, "deadline", None)
    at = time.monotonic() + secs
    _LOCAL.deadline = at if previous is None else min(previous, at)
    try:
        yield _LOCAL.deadline
    finally:
        _LOCAL.deadline = previous


def time_left() -> float | None:
    """Seconds left before this thread's deadline (0 when passed), or None without one."""
    at = getattr(_LOCAL, "deadline", None)
    return None if at is None else max(0.0, at - time.monotonic())
