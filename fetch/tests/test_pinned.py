"""The page transport's reads and its one reliance on an httpx internal, pinned so an upgrade fails here first."""

from __future__ import annotations

import inspect

import httpcore
import httpx

from fetch.pinned import READ_BYTES, DeadlineStream, _PoolTransport


class _Recorded(httpcore.NetworkStream):
    def __init__(self) -> None:
        self.asked: list[int] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.asked.append(max_bytes)
        return b""


def test_a_page_is_read_in_pieces_of_a_quarter_mebibyte_not_httpcores_64_kib():
    # Fewer socket reads a page, each of which hands the GIL to another job thread and back.
    inner = _Recorded()
    stream = DeadlineStream(inner)
    stream.read(64 * 1024)
    stream.read(1024 * 1024)
    assert READ_BYTES == 256 * 1024
    assert inner.asked == [READ_BYTES, 1024 * 1024]


def test_httpcore_still_reads_a_connection_through_its_network_stream():
    # The read size above applies only if httpcore's HTTP/1.1 connection reads through the stream's `read`.
    assert httpcore.HTTP11Connection.READ_NUM_BYTES <= READ_BYTES
    assert "self._network_stream.read(" in inspect.getsource(httpcore.HTTP11Connection._receive_event)


class _Pool(httpcore.ConnectionPool):
    """A pool that answers every request itself, without a network."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpcore.Request] = []

    def handle_request(self, request: httpcore.Request) -> httpcore.Response:
        self.requests.append(request)
        return httpcore.Response(200, headers=[(b"x-pool", b"ours")], content=b"hello")


def test_httpx_transport_still_sends_through_the_pool_it_keeps_in_pool():
    # `_PoolTransport` hands httpx's transport a pool of ours through its `_pool` attribute (httpx takes no
    # network backend). If an httpx upgrade stops sending through `_pool`, the guard would silently be
    # bypassed: this fails first, loudly.
    pool = _Pool()
    transport = _PoolTransport(pool)
    with httpx.Client(transport=transport) as client:
        response = client.get("http://site.example/page")
    assert (response.status_code, response.headers["x-pool"], response.text) == (200, "ours", "hello")
    assert [bytes(request.url.host) for request in pool.requests] == [b"site.example"]
