"""The httpx transport the pages go through: every connection opened to an address checked just before.

httpx's own transport lets the system resolver pick the address inside
`socket.create_connection`, after anything we could check. Here an httpcore
network backend resolves the name once (`outbound.allowed_addresses`),
refuses loopback, private and the rest, and connects to the address it
checked; TLS still names the host (SNI, certificate check) and the Host
header is the URL's, so nothing else changes for the site. A refused
connection raises `outbound.AddressRefused`, which httpx lets through
unchanged (it maps only httpcore's own errors).

Every socket wait is also cut at the deadline of the request in flight on
the thread (`outbound.deadline`), so a site trickling a byte every few
seconds cannot hold a request past it.

Each read asks the socket for READ_BYTES at once instead of httpcore's
64 KiB (`DeadlineStream.read`), through httpcore's public network-stream
interface rather than a patch of its connection class.

The proxy and the trusted CAs are `fetch.egress`'s, the same rule the image
transport follows, so a source's pages and images leave one way.

httpx's `HTTPTransport` takes no network backend, so `_PoolTransport` gives
it a pool built here; it relies on the transport keeping its pool in
`_pool`, as httpx 0.28 does (pinned in requirements.txt;
`fetch/tests/test_pinned.py` fails loudly if that changes). This is the one
place that leans on an httpx internal.
"""

from __future__ import annotations

import threading
import typing

import httpcore
import httpx

from fetch import egress, outbound

# How much one socket read of a page's answer may take. httpcore asks for 64 KiB
# at a time, and every read is three system calls (the socket's timeout set,
# then poll and recv), each handing the GIL to another job thread and back. A
# Madara detail page with its chapter list inline runs to hundreds of KiB: at
# 256 KiB it takes one or two reads. (When the images still went through httpx
# it cut 1.2-1.6 s of CPU per 1,000 pages: bench/README.md.) A read returns what
# has arrived, so small answers are unaffected.
READ_BYTES = 256 * 1024
_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)


def _bounded(timeout: float | None, late: type[Exception]) -> float | None:
    """`timeout` shortened to what is left of the thread's deadline; `late` raised once it has passed."""
    left = outbound.time_left()
    if left is None:
        return timeout
    if left <= 0:
        raise late("the request's overall deadline has passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A connection whose every wait ends by the thread's request deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max(max_bytes, READ_BYTES), _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: typing.Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout))
        return DeadlineStream(inner)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.SyncBackend):
    """The system's connections with the deadline applied: for the proxy, which the operator chose."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _bounded(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(super().connect_tcp(host, port, timeout, local_address, socket_options))


class GuardedBackend(httpcore.SyncBackend):
    """Resolve once, check, connect to the checked address (never to a second answer of the resolver)."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _bounded(timeout, httpcore.ConnectTimeout)
        try:
            candidates = outbound.allowed_addresses(host, port)
        except OSError as exc:  # the name does not resolve
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        error: Exception = httpcore.ConnectError(f"{host} has no address")
        for _, sockaddr in candidates:
            try:
                # The checked address itself: connecting to an IP literal resolves nothing again.
                stream = super().connect_tcp(str(sockaddr[0]), port, timeout, local_address, socket_options)
            except (httpcore.ConnectTimeout, httpcore.ConnectError) as exc:
                error = exc
                continue
            return DeadlineStream(stream)
        raise error


class _PoolTransport(httpx.HTTPTransport):
    """httpx's transport (its request conversion and error mapping) over a pool built here."""

    def __init__(self, pool: httpcore.ConnectionPool) -> None:
        # Not HTTPTransport.__init__, which would build a pool of its own beside this one.
        self._pool = pool


def _direct_pool() -> httpcore.ConnectionPool:
    return httpcore.ConnectionPool(
        ssl_context=egress.ssl_context(),
        max_connections=_LIMITS.max_connections,
        max_keepalive_connections=_LIMITS.max_keepalive_connections,
        keepalive_expiry=_LIMITS.keepalive_expiry,
        network_backend=GuardedBackend(),
    )


def _proxy_pool(proxy_url: str) -> httpcore.ConnectionPool:
    proxy = httpx.Proxy(proxy_url)
    return httpcore.HTTPProxy(
        proxy_url=httpcore.URL(
            scheme=proxy.url.raw_scheme, host=proxy.url.raw_host, port=proxy.url.port, target=proxy.url.raw_path
        ),
        proxy_auth=proxy.raw_auth,
        proxy_headers=proxy.headers.raw,
        ssl_context=egress.ssl_context(),
        proxy_ssl_context=proxy.ssl_context,
        max_connections=_LIMITS.max_connections,
        max_keepalive_connections=_LIMITS.max_keepalive_connections,
        keepalive_expiry=_LIMITS.keepalive_expiry,
        network_backend=DeadlineBackend(),
    )


class GuardedTransport(httpx.BaseTransport):
    """Direct requests over the guarded pool; proxied ones (the environment's proxy) after checking the target.

    The proxy is chosen per request (`egress.proxy_checked`), the same rule the
    image transport follows, so a source's pages and images leave one way.
    """

    def __init__(self) -> None:
        self._direct = _PoolTransport(_direct_pool())
        self._proxied: dict[str, _PoolTransport] = {}
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        proxy = egress.proxy_checked(str(request.url))
        if proxy is None:
            return self._direct.handle_request(request)
        with self._lock:
            transport = self._proxied.get(proxy)
            if transport is None:
                transport = self._proxied[proxy] = _PoolTransport(_proxy_pool(proxy))
        return transport.handle_request(request)

    def close(self) -> None:
        with self._lock:
            transports = [self._direct, *self._proxied.values()]
        for transport in transports:
            transport.close()
