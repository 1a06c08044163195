"""The httpx client HTML pages go through: one per source and process, cookieless, over the guarded transport.

Every connection it opens passes the outbound rule (`fetch.pinned`); the
proxy and trusted CAs are `fetch.egress`'s. What a source does with the
client (its host allow-list, cookies, politeness, challenges, error kinds)
is the crawler's (`sources.http`).
"""

from __future__ import annotations

import threading

import httpx

from fetch.page_body import ACCEPT_ENCODING
from fetch.pinned import GuardedTransport

USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) Mangalord/1.0"


class _NoCookies(httpx.Cookies):
    """Cookies that are never kept, so never sent either."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass


class CookielessClient(httpx.Client):
    """An httpx client that keeps no cookies: each adapter keeps its own (`SourceCookies`) and sends them itself.

    A plain client, even with a jar whose policy takes nothing, ran every
    answer through the stdlib's cookie machinery (the headers copied into an
    `email.message.Message`, a `urllib` request built, the policy asked) to
    store nothing: about a tenth of the CPU an image request costs.
    """

    _none = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._none

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        if cookies:
            raise ValueError("this client keeps no cookies: an adapter sends its own (SourceCookies)")


_CLIENTS: dict[tuple[str, float, tuple[tuple[str, str], ...]], httpx.Client] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(source_id: str, headers: dict[str, str], *, timeout: float) -> httpx.Client:
    """This process's httpx client for a source's requests, made once and shared by its adapters and threads.

    A client per job cost an SSL context and the CA bundle (a few ms of CPU)
    and a fresh connection for every job; shared, the connections to the
    site stay open from one job to the next. httpx clients are thread-safe.
    It keeps no cookies (`CookielessClient`): each adapter keeps its own
    (`SourceCookies`) and sends them itself, so one job's session never leaks
    into another's request. `timeout` bounds each wait (the caller's CRAWLER_HTTP_TIMEOUT_SECS).
    """
    key = (source_id, timeout, tuple(sorted(headers.items())))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None or client.is_closed:
            # The guarded transport: each connection to an address the outbound rule allows, pinned.
            client = _CLIENTS[key] = CookielessClient(
                timeout=httpx.Timeout(timeout),
                follow_redirects=False,
                headers={"Accept-Encoding": ACCEPT_ENCODING, **headers},
                transport=GuardedTransport(),
            )
        return client
