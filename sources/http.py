"""A source's plain-HTTP requests: guarded redirects, its politeness gate, its cookies and its challenges.

Pages go through the process's shared httpx client (`fetch.pages`), images through libcurl
(`fetch.curl_transfer`); both walk the same redirect loop here, so
every hop passes the host guard before it is requested. The session cookie
is sent from the adapter's own store (`sources.cookies`) and never
logged; what an answer means to the crawler (its status as an error kind,
the page or image stream handed back) is `sources.answers`.

Both transports connect only to addresses the outbound rule allows
(`fetch.outbound`: no loopback, private or link-local target
unless OUTBOUND_ALLOWED_NETWORKS names it), each to the very address it
checked. A page's body is read under a size cap (CRAWLER_MAX_PAGE_BYTES)
and the whole request under a deadline (CRAWLER_PAGE_DEADLINE_SECS) beside
the idle timeout (CRAWLER_HTTP_TIMEOUT_SECS).

Every request goes through the source's gate (`sources.politeness.gate`): one
slot for the whole redirect chain, held until the body is read (pages) or
the stream is closed (images), and one token per hop. A 429, or a 503 with
Retry-After, cools the whole source down before anything else reads it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar
from urllib.parse import urljoin

import httpx
from django.conf import settings

from fetch import outbound
from fetch.challenge import SCAN_CHARS, Challenge, detect_challenge, may_be_challenge
from fetch.curl_transfer import Transfer, TransferError
from fetch.page_body import BodyTooLarge, UnaskedEncoding, declared_length, decode_text, read_capped
from fetch.pages import USER_AGENT, shared_client
from sources.answers import FetchedPage, HttpImageStream, raise_for_status
from sources.clearance.handler import Challenges, Unpassable, past_challenges
from sources.cookies import SourceCookies, keep_set_cookies
from sources.errors import CrawlerError, FetchRefused, PageTooLarge, SourceUnavailable
from sources.hosts import HostGuard
from sources.politeness.gate import Held, RequestGate, Unlimited, check_answer

MAX_REDIRECTS = 5
# A request body: form fields (list paging, ajax chapter lists) or raw bytes sent as they are (a GraphQL JSON body).
Body = dict[str, str] | bytes | None


class _Answer(Protocol):
    """What the redirect walk reads of an answer: an httpx response (pages) or a libcurl transfer (images)."""

    @property
    def status_code(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def is_redirect(self) -> bool: ...
    def close(self) -> None: ...


_A = TypeVar("_A", bound=_Answer)


class SourceHttp:
    """A source's requests, through the process's shared client, bound to the adapter's host guard and cookies."""

    def __init__(
        self,
        source_id: str,
        guard: HostGuard,
        cookies: SourceCookies,
        *,
        headers: dict[str, str] | None = None,
        gate: RequestGate | None = None,
        challenges: Challenges | None = None,
    ) -> None:
        self.source_id = source_id
        self.guard = guard
        self.cookies = cookies
        # What to do when the site answers a JavaScript challenge; the User-Agent of its pass rides on every request.
        self.challenges: Challenges = challenges or Unpassable(source_id)
        self.gate = gate or Unlimited(source_id)
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self.timeout = float(settings.CRAWLER_HTTP_TIMEOUT_SECS)
        self.client = shared_client(source_id, self.headers, timeout=self.timeout)

    def request_page(
        self,
        url: str,
        *,
        method: str = "GET",
        data: Body = None,
        headers: dict[str, str] | None = None,
        check: bool = True,
    ) -> FetchedPage:
        """Fetch a page (GET, or POST with a form body); `check=False` returns 4xx answers instead of raising.

        A JavaScript challenge is passed (`sources.clearance.records`) and the request made again. Each
        request, redirects included, ends by CRAWLER_PAGE_DEADLINE_SECS (SourceUnavailable); a body over
        CRAWLER_MAX_PAGE_BYTES is PageTooLarge.
        """
        page, _ = past_challenges(
            url,
            lambda: self._request_page_once(url, method=method, data=data, headers=headers),
            lambda answer: detect_challenge(answer[0].status, answer[1], answer[0].html),
            self.challenges,
        )
        if check or not 400 <= page.status < 500:
            raise_for_status(self.source_id, page.status, page.url)
        return page

    def _request_page_once(
        self, url: str, *, method: str, data: Body, headers: dict[str, str] | None
    ) -> tuple[FetchedPage, httpx.Headers]:
        with outbound.deadline(float(settings.CRAWLER_PAGE_DEADLINE_SECS)):
            response, held = self._send_guarded(
                url, what="page", method=method, data=data, headers=headers, send=self._send_one
            )
            try:
                body = self._read_body(response)
            finally:
                response.close()
                held.release()
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        page = FetchedPage(
            str(response.url), response.status_code, decode_text(body, response.charset_encoding), media_type
        )
        return page, response.headers

    def _read_body(self, response: httpx.Response) -> bytearray:
        cap = int(settings.CRAWLER_MAX_PAGE_BYTES)
        url = str(response.url)
        try:
            declared = declared_length(response.headers)
            if declared is not None and declared > cap:
                raise BodyTooLarge(cap, declared=declared)
            return read_capped(
                response.iter_raw(), content_encoding=response.headers.get("content-encoding", ""), cap=cap
            )
        except BodyTooLarge as exc:
            raise PageTooLarge(
                f"source {self.source_id!r}: {url} is larger than the page cap of {cap} bytes "
                f"(CRAWLER_MAX_PAGE_BYTES): {exc}"
            ) from exc
        except UnaskedEncoding as exc:
            raise CrawlerError(f"source {self.source_id!r}: reading {url} failed: {exc}") from exc
        except (httpx.HTTPError, zlib.error) as exc:
            raise SourceUnavailable(self._failure("reading", url, exc)) from exc

    def _failure(self, doing: str, url: str, exc: Exception) -> str:
        """The message of a failed request; one that ran out of its deadline says which setting bounds it."""
        if outbound.time_left() == 0:
            secs = float(settings.CRAWLER_PAGE_DEADLINE_SECS)
            return (
                f"source {self.source_id!r}: {doing} {url} did not finish within its {secs:g} s deadline "
                f"(CRAWLER_PAGE_DEADLINE_SECS): {exc}"
            )
        return f"source {self.source_id!r}: {doing} {url} failed: {exc}"

    def open_image(self, url: str, *, referer: str | None = None) -> HttpImageStream:
        transfer, held = past_challenges(
            url,
            lambda: self._send_guarded(
                url, what="image URL", headers={"Referer": referer} if referer else None, send=self._send_one_image
            ),
            self._image_challenge,
            self.challenges,
        )
        try:
            raise_for_status(self.source_id, transfer.status_code, transfer.url, image=True)
        except CrawlerError:
            transfer.close()
            held.release()
            raise
        return HttpImageStream(transfer, self.source_id, held)

    def _image_challenge(self, answer: tuple[Transfer, Held]) -> Challenge | None:
        """An image answered by a challenge's interstitial (its body read only for a 403/429/503)."""
        transfer, held = answer
        if not may_be_challenge(transfer.status_code, transfer.headers):
            return None
        head = b""
        try:
            for chunk in transfer.chunks():
                head += chunk
                if len(head) >= SCAN_CHARS:
                    break
        except TransferError:
            pass  # what arrived is enough to decide, and the answer is an error either way
        challenge = detect_challenge(transfer.status_code, transfer.headers, head.decode("utf-8", "replace"))
        if challenge is not None:
            transfer.close()
            held.release()
        return challenge

    def close(self) -> None:
        """Nothing to free: the client and its connections stay for the source's next job."""

    def _send_guarded(
        self,
        url: str,
        *,
        what: str,
        send: Callable[[str, str, dict[str, str] | None, Body], _A],
        method: str = "GET",
        data: Body = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[_A, Held]:
        """Send a request with `send`, following up to MAX_REDIRECTS hops, each checked before it is requested.

        A redirected POST continues as a GET, as browsers do for 301/302/303.
        Returns the answer, its body not read yet, with the slot it holds; the caller releases it.
        """
        self.guard.check(url, what=what)  # before the gate: a refused URL costs no token
        held = self.gate.acquire()
        try:
            for hop in range(MAX_REDIRECTS + 1):
                if hop:
                    self.guard.check(url, what=what)
                    self.gate.acquire(slot=False)  # a redirect hop is one more request: one more token
                answer = send(method, url, headers, data)
                if not answer.is_redirect:
                    return answer, held
                answer.close()
                url = urljoin(url, answer.headers["location"])
                what = f"redirect target (from a {what})"
                if answer.status_code in (301, 302, 303):
                    method, data = "GET", None
        except BaseException:
            held.release()
            raise
        held.release()
        raise SourceUnavailable(f"source {self.source_id!r}: more than {MAX_REDIRECTS} redirects for {url}")

    def _send_one(self, method: str, url: str, headers: dict[str, str] | None, data: Body) -> httpx.Response:
        try:
            request = self.client.build_request(
                method,
                url,
                headers=self._with_cookie(url, headers) or None,
                data=data if isinstance(data, dict) else None,
                content=data if isinstance(data, bytes) else None,
            )
        except httpx.InvalidURL as exc:  # `0177.0.0.1` and other spellings httpx will not send
            raise FetchRefused(f"source {self.source_id!r}: refusing to fetch {url!r}: {exc}") from exc
        try:
            response = self.client.send(request, stream=True)
        except outbound.AddressRefused as exc:
            raise FetchRefused(f"source {self.source_id!r}: refusing to fetch {url}: {exc}") from exc
        except httpx.RemoteProtocolError as exc:
            if "location header" in str(exc):  # a redirect to `0177.0.0.1` and the like: the same every time
                raise FetchRefused(f"source {self.source_id!r}: refusing the redirect from {url}: {exc}") from exc
            raise SourceUnavailable(self._failure("fetching", url, exc)) from exc
        except httpx.HTTPError as exc:
            raise SourceUnavailable(self._failure("fetching", url, exc)) from exc
        return self._answered(response, url, response.headers.get_list("set-cookie"))

    def _send_one_image(self, method: str, url: str, headers: dict[str, str] | None, data: Body) -> Transfer:
        if method != "GET" or data is not None:
            raise ValueError("images are fetched with a bodiless GET")
        try:
            transfer = Transfer(
                url,
                {**self.headers, **self._with_cookie(url, headers)},
                timeout_secs=self.timeout,
                deadline_secs=float(settings.CRAWLER_IMAGE_DEADLINE_SECS),
            )
        except outbound.AddressRefused as exc:
            raise FetchRefused(f"source {self.source_id!r}: refusing to fetch {url}: {exc}") from exc
        except ValueError as exc:  # the same request would fail every time: not an outage to wait out
            raise CrawlerError(f"source {self.source_id!r}: image request for {url!r} refused: {exc}") from exc
        except TransferError as exc:
            raise SourceUnavailable(f"source {self.source_id!r}: fetching {url} failed: {exc}") from exc
        return self._answered(transfer, url, transfer.set_cookies)

    def _with_cookie(self, url: str, headers: dict[str, str] | None) -> dict[str, str]:
        cookie = self.cookies.header_for(url)
        # A challenge's clearance cookie is bound to the User-Agent it was issued to: send that one with it.
        agent = self.challenges.user_agent
        return {**({"User-Agent": agent} if agent else {}), **(headers or {}), **({"Cookie": cookie} if cookie else {})}

    def _answered(self, answer: _A, url: str, set_cookies: list[str]) -> _A:
        """Keep what the answer set, and let the gate see it (a 429 cools the source down) before anyone reads it."""
        keep_set_cookies(self.cookies, url, set_cookies)
        try:
            check_answer(self.gate, answer.status_code, answer.headers.get("retry-after"), url)
        except BaseException:
            answer.close()
            raise
        return answer
