"""Image downloads through libcurl (pycurl): a page's bytes move in C, with the interpreter lock released.

Images are nearly all of a crawl's requests and bytes. Through httpx a page of
~300 KiB cost about 1.3 ms of CPU with four job threads in a process: h11 and
httpcore parse and copy every read in Python, and every read hands the
interpreter lock to another thread and back. Through libcurl the same page
costs about 0.4 ms (bench/README.md). Pages of HTML, a few a chapter, stay on
httpx (`fetch.pages`).

libcurl pushes a body into a callback; the storage pulls it (`chunks()`). The
pull is made by driving a multi handle one step at a time: `Transfer` runs it
until the answer's headers are in, then `chunks()` until the next bytes are.
A step reads what the socket holds (libcurl caps the reads of one step), so
memory stays at a few buffers however large the image.

Handles are not shared between threads: each job thread keeps its own multi
and easy handle, whose connection cache keeps the site's connections open
from one page to the next. Redirects are not followed here; the caller
checks each hop against the source's host guard first.

Every socket libcurl opens goes through `_Handles._open_socket`, which asks
the outbound rule (`fetch.outbound`) about the very address libcurl
is about to connect to: there is no second lookup to win a race against.
Through the environment's proxy, libcurl connects to the proxy, so the
target's addresses are checked before the request instead. Which proxy, and
which CAs a TLS answer must chain to, is `fetch.egress`: the rule the pages'
transport follows too.
"""

from __future__ import annotations

import ipaddress
import math
import re
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pycurl  # type: ignore[import-untyped]

from fetch import egress, outbound

# libcurl's read buffer: a page body arrives in one or two callbacks (its default, 16 KiB, took eighteen).
BUFFER_BYTES = 256 * 1024
# Connections a thread keeps open, across the sources its jobs fetch from.
KEPT_CONNECTIONS = 32
# Longest a step waits on the sockets before looking again; the timeouts themselves are libcurl's.
_STEP_WAIT_SECS = 1.0
_HTTP_ONLY = pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_LINE_BREAKS = re.compile(r"[\r\n\0]")


class TransferError(Exception):
    """libcurl gave up on the transfer (connection refused, reset, timed out, TLS failure)."""


class _Handles:
    """One thread's libcurl handles, set up once; the transfer in flight receives the callbacks."""

    def __init__(self) -> None:
        self.multi = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_MAXCONNECTS, KEPT_CONNECTIONS)
        self.easy = easy = pycurl.Curl()
        easy.setopt(pycurl.NOSIGNAL, 1)
        easy.setopt(pycurl.BUFFERSIZE, BUFFER_BYTES)
        easy.setopt(pycurl.PROTOCOLS, _HTTP_ONLY)
        easy.setopt(pycurl.REDIR_PROTOCOLS, _HTTP_ONLY)
        easy.setopt(pycurl.FOLLOWLOCATION, 0)
        easy.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        trusted = egress.trust()
        if trusted.cafile:
            easy.setopt(pycurl.CAINFO, trusted.cafile)
        else:  # SSL_CERT_DIR: a hashed directory; never the bundle path libcurl was built with
            easy.setopt(pycurl.CAINFO, None)
            easy.setopt(pycurl.CAPATH, trusted.capath or "")
        easy.setopt(pycurl.OPENSOCKETFUNCTION, self._open_socket)
        easy.setopt(pycurl.ACCEPT_ENCODING, "")  # what libcurl can decode, decoded, as httpx does
        easy.setopt(pycurl.HEADERFUNCTION, self._header)
        easy.setopt(pycurl.WRITEFUNCTION, self._body)
        self.current: Transfer | None = None

    def _header(self, line: bytes) -> None:
        if self.current is not None:
            self.current.take_header_line(line)

    def _body(self, data: bytes) -> None:
        if self.current is not None:
            self.current.pending.append(data)

    def _open_socket(self, purpose: int, address: Any) -> Any:
        """libcurl's socket(2): refused (and the reason kept) when the address is not an allowed target."""
        transfer = self.current
        if transfer is not None and not transfer.proxied:
            host = urlsplit(transfer.url).hostname or ""
            try:
                outbound.check_address(host, ipaddress.ip_address(str(address.addr[0]).split("%")[0]))
            except outbound.AddressRefused as exc:
                transfer.refused = transfer.refused or str(exc)
                return pycurl.SOCKET_BAD
        return socket.socket(address.family, address.socktype, address.protocol)


_THREAD = threading.local()


def _idle_handles() -> list[_Handles]:
    idle = getattr(_THREAD, "idle", None)
    if idle is None:
        idle = _THREAD.idle = []
    return idle


class Transfer:
    """One GET in flight on this thread's handles: status and headers once made, then the body's bytes.

    `close()` ends it (a body not read to its end closes the connection, as
    with any HTTP client) and gives its handles back to the thread for the
    next transfer; a transfer never closed takes its handles with it.
    """

    def __init__(
        self, url: str, headers: dict[str, str], *, timeout_secs: float, deadline_secs: float | None = None
    ) -> None:
        """Send the GET and wait for the answer's headers; ValueError (nothing sent) for a URL or header that
        would split the request: libcurl sends header lines as given. `outbound.AddressRefused` (nothing
        sent) when the host is not an allowed target; `deadline_secs` bounds the whole transfer."""
        for text in (url, *headers, *headers.values()):
            if _LINE_BREAKS.search(text):
                raise ValueError(f"{text[:80]!r} holds a line break or NUL, which would split the request")
        # The proxy as the pages' transport takes it (`fetch.egress`; libcurl alone would ignore an upper-case
        # HTTP_PROXY), so a source's images and pages leave by the same way.
        proxy = egress.proxy_checked(url)
        idle = _idle_handles()
        handles = idle.pop() if idle else _Handles()
        self.url = url
        self.status_code = 0
        self.headers: dict[str, str] = {}  # lower-case names; a repeated header's last value
        self.set_cookies: list[str] = []
        self.pending: list[bytes] = []
        self._headers_done = False
        self._finished = False
        self._error: str | None = None
        self._handles = handles
        self._timeout_secs = timeout_secs
        self._deadline_secs = deadline_secs
        self.proxied = bool(proxy)
        self.refused: str | None = None  # why `_open_socket` refused the address, if it did
        easy = handles.easy
        easy.setopt(pycurl.URL, url)
        easy.setopt(pycurl.PROXY, proxy or "")  # "": none
        easy.setopt(pycurl.TIMEOUT_MS, int(deadline_secs * 1000) if deadline_secs else 0)
        easy.setopt(pycurl.HTTPHEADER, [f"{name}: {value}" for name, value in headers.items()])
        easy.setopt(pycurl.CONNECTTIMEOUT_MS, max(1, int(timeout_secs * 1000)))
        # httpx's timeout is per read; libcurl's nearest is "slower than 1 byte/s for that long".
        easy.setopt(pycurl.LOW_SPEED_LIMIT, 1)
        easy.setopt(pycurl.LOW_SPEED_TIME, max(1, math.ceil(timeout_secs)))
        handles.current = self
        handles.multi.add_handle(easy)
        try:
            self._run_until(lambda: self._headers_done)
            if self.refused is not None and not self._headers_done:
                raise outbound.AddressRefused(self.refused)
            if not self._headers_done:
                raise TransferError(self._error or "the connection closed before an answer")
        except BaseException:
            self.close()
            raise

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers

    def chunks(self) -> Iterator[bytes]:
        """The body's bytes as libcurl reads them; TransferError when the transfer breaks off."""
        while True:
            while self.pending:
                yield self.pending.pop(0)
            if self._finished:
                if self._error is not None:
                    raise TransferError(self._error)
                return
            self._run_until(lambda: bool(self.pending))

    def close(self) -> None:
        handles = self._handles
        if handles.current is self:
            handles.multi.remove_handle(handles.easy)
            handles.current = None
            self.pending = []
            _idle_handles().append(handles)

    def take_header_line(self, line: bytes) -> None:
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text.startswith("HTTP/"):  # a new answer: after a 100 Continue, the real one
            self.status_code = int(text.split()[1])
            self.headers, self.set_cookies = {}, []
        elif not text:
            self._headers_done = self.status_code >= 200
        elif ":" in text:
            name, _, value = text.partition(":")
            name, value = name.strip().lower(), value.strip()
            self.headers[name] = value
            if name == "set-cookie":
                self.set_cookies.append(value)

    def _run_until(self, done: Callable[[], bool]) -> None:
        multi = self._handles.multi
        while not self._finished and not done():
            multi.perform()
            _, finished, failed = multi.info_read()
            if failed:
                self._error = self._describe(failed[0][1], failed[0][2])
            self._finished = bool(finished or failed)
            if not self._finished and not done():
                multi.select(_STEP_WAIT_SECS)

    def _describe(self, code: int, message: str) -> str:
        if code == pycurl.E_OPERATION_TIMEDOUT and self._deadline_secs and "Operation timed out after" in message:
            secs = self._deadline_secs
            return f"did not finish within its {secs:g} s deadline (CRAWLER_IMAGE_DEADLINE_SECS): {message}"
        if code == pycurl.E_OPERATION_TIMEDOUT:
            return f"timed out after {self._timeout_secs:g} s without data (CRAWLER_HTTP_TIMEOUT_SECS): {message}"
        return message or f"libcurl error {code}"
