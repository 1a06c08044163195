"""Which IP addresses the crawler may connect to: the public internet, plus networks the operator names.

Pure decisions, no I/O: `fetch.outbound` resolves names and asks
here about each address before a connection is made. A site's URL, a
chapter's `<img src>` and a redirect's Location are text a stranger writes;
without this check they could point the server at itself (127.0.0.1, the
database, Redis), at the LAN, or at a cloud's metadata service
(169.254.169.254). Names are not compared: the address a name resolves to
is, so every spelling of an address (`2130706433`, `0x7f000001`,
`0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`) meets the same rule.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# IPv6 prefixes that carry an IPv4 address in their low 32 bits and reach it
# (NAT64's well-known prefix, RFC 6052); Python's `is_global` calls them global.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated `::a.b.c.d`, still routed by some stacks
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # carrier-grade NAT: inside someone's network


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, compatible, 6to4, Teredo, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64:
        return low
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # not :: nor ::1, which are IPv6's own
        return low
    return None


def kind_of(address: IPAddress) -> str | None:
    """What makes `address` a non-public target ("a loopback address", ...), or None for a public one."""
    inner = embedded_ipv4(address)
    if inner is not None:
        kind = kind_of(inner)
        return f"{kind} ({inner}, inside {address})" if kind else None
    if address.is_unspecified:
        return "an unspecified address (it reaches this machine)"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if address.is_private:
        return "a private address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "not a public internet address"
    return None


def refusal(address: IPAddress, allowed: Iterable[IPNetwork]) -> str | None:
    """Why connecting to `address` is refused (its kind), or None when it is public or the operator allowed it.

    An allowance names networks; an IPv4-mapped spelling of an allowed IPv4
    address is allowed too (it is the same host).
    """
    kind = kind_of(address)
    if kind is None:
        return None
    candidates = [address]
    inner = embedded_ipv4(address)
    if inner is not None:
        candidates.append(inner)
    for network in allowed:
        if any(c.version == network.version and c in network for c in candidates):
            return None
    return kind


def is_localhost_name(host: str) -> bool:
    """`localhost`, `x.localhost`, with or without the root's dot: loopback by definition (RFC 6761).

    Browsers and libcurl answer these themselves, whatever the system
    resolver says, so the rule must treat them as loopback too.
    """
    name = host.strip().rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def ip_literal(host: str) -> IPAddress | None:
    """The address a URL host spells directly, in any form the system resolver accepts, or None for a name.

    `127.1`, `2130706433`, `0x7f000001` and `0177.0.0.1` are IPv4 addresses
    to `inet_aton` (and so to the resolver every HTTP stack calls), not names.
    """
    text = host.strip().strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        pass
    return _legacy_ipv4(text)


def _legacy_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """`inet_aton`'s forms: 1-4 dot-separated parts, each decimal, octal (leading 0) or hex (0x)."""
    parts = text.lower().split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        try:
            if part.startswith("0x"):
                values.append(int(part[2:] or "0", 16))
            elif part.startswith("0") and len(part) > 1:
                values.append(int(part[1:], 8))
            else:
                values.append(int(part, 10) if part.isascii() and part.isdigit() else -1)
        except ValueError:
            return None
    if any(v < 0 for v in values) or any(v > 255 for v in values[:-1]):
        return None
    last_bits = 8 * (5 - len(values))
    if values[-1] >= 1 << last_bits:
        return None
    number = 0
    for value in values[:-1]:
        number = number << 8 | value
    number = number << last_bits | values[-1]
    return ipaddress.IPv4Address(number)


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """`127.0.0.1/32,::1/128,10.0.0.0/8` -> networks; ValueError naming the entry that is not one."""
    networks = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=True))
        except ValueError as exc:
            raise ValueError(f"{entry!r} is not a network like 127.0.0.1/32 or ::1/128 ({exc})") from exc
    return tuple(networks)
