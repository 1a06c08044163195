"""The cookies an adapter sends, kept by the adapter itself and never by the shared client.

One store per adapter, so one job's session never leaks into another's
request; the shared httpx client keeps none (`fetch.pages`). Values are
secrets: nothing here logs them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx


class SourceCookies:
    """The cookies an adapter sends: the operator's session cookie plus any the site or browser set.

    A tiny domain-matched store instead of the stdlib jar, whose rules drop
    cookies for hosts like `localhost` and would not take the browser
    context's cookies as they come. Values are never logged.
    """

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str] = {}

    def set(self, name: str, value: str, domain: str) -> None:
        self._values[(domain.lstrip(".").lower(), name)] = value

    def header_for(self, url: str) -> str | None:
        host = (urlsplit(url).hostname or "").lower()
        pairs = [
            f"{name}={value}"
            for (domain, name), value in self._values.items()
            if host == domain or host.endswith("." + domain)
        ]
        return "; ".join(pairs) or None


def keep_set_cookies(cookies: SourceCookies, url: str, set_cookies: list[str]) -> None:
    """Move what an answer to `url` set into the adapter's store, by the stdlib jar's rules as httpx applies them.

    The client keeps nothing (`fetch.pages.CookielessClient`), so it never
    adds a second Cookie header. Most answers (every image) set none: no
    cookie parsing for them. Both transports' answers come through here.
    """
    if not set_cookies:
        return
    answer = httpx.Response(
        200, headers=[("set-cookie", value) for value in set_cookies], request=httpx.Request("GET", url)
    )
    host = answer.url.host
    for cookie in answer.cookies.jar:
        cookies.set(cookie.name, cookie.value or "", cookie.domain if cookie.domain_specified else host)
