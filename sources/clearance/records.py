"""What a challenge pass yields: the site's cookies and the User-Agent they are bound to, and who can pass.

A `Passer` (the worker's Chromium: `sources.clearance.browser_passer`; a
FlareSolverr endpoint: `sources.clearance.solver`) gets past a challenge and
returns a `Clearance`; `sources.clearance.handler` decides when to ask one,
`crawler.clearance.rows` keeps what it returned for every worker. These are
crawl policy and storage, so they live in the crawler; recognising a
challenge on the wire and waiting one out in a tab are transport work
(`fetch.challenge`, `fetch.browser_pass`).

Cookie values are secrets: nothing here logs them or puts them in an error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

# --- what a pass yields ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClearanceCookie:
    name: str
    value: str
    domain: str
    path: str = "/"
    expires: float | None = None  # seconds since the epoch; None: a session cookie

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "domain": self.domain, "path": self.path,
                "expires": self.expires}  # fmt: skip


@dataclass(frozen=True)
class Clearance:
    """The cookies a pass left for the site and the User-Agent they were issued to."""

    cookies: tuple[ClearanceCookie, ...]
    user_agent: str
    via: str  # "browser" or "solver"

    @property
    def expires_at(self) -> dt.datetime | None:
        """When the first cookie with an expiry runs out (None: session cookies only, kept until challenged)."""
        stamps = [c.expires for c in self.cookies if c.expires is not None]
        return dt.datetime.fromtimestamp(min(stamps), dt.UTC) if stamps else None

    def cookie_names(self) -> list[str]:
        return sorted(c.name for c in self.cookies)

    def browser_cookies(self) -> list[dict[str, Any]]:
        """The cookies as Playwright's `add_cookies` takes them (for sources rendered in the browser)."""
        out = []
        for c in self.cookies:
            cookie: dict[str, Any] = {"name": c.name, "value": c.value, "domain": c.domain, "path": c.path}
            if c.expires is not None:
                cookie["expires"] = c.expires
            out.append(cookie)
        return out


def _domain_matches(host: str, domain: str) -> bool:
    domain = domain.lstrip(".").lower()
    return host == domain or host.endswith("." + domain)


def clearance_cookies(
    records: Iterable[Mapping[str, Any]], url: str, *, exclude: Iterable[str] = ()
) -> tuple[ClearanceCookie, ...]:
    """The cookies of `records` that `url`'s host is sent, as a browser or a solver lists them.

    Playwright and FlareSolverr v1/v2 (puppeteer) give `expires` (-1 for a
    session cookie); FlareSolverr v3 (Selenium) gives `expiry` or nothing.
    `exclude` drops cookies that are not the pass's to keep (the operator's
    session cookie, which the session control owns).
    """
    host = (urlsplit(url).hostname or "").lower()
    skip = set(exclude)
    out = []
    for record in records:
        name, value, domain = record.get("name"), record.get("value"), record.get("domain") or host
        if not isinstance(name, str) or not isinstance(value, str) or not name or name in skip:
            continue
        if not isinstance(domain, str) or not _domain_matches(host, domain):
            continue
        stamp = record.get("expires", record.get("expiry"))
        expires = float(stamp) if isinstance(stamp, (int, float)) and stamp > 0 else None
        path = record.get("path") if isinstance(record.get("path"), str) else "/"
        out.append(ClearanceCookie(name, value, domain.lstrip(".").lower(), path or "/", expires))
    return tuple(out)


def clearance_from_json(cookies: Any, user_agent: str, via: str) -> Clearance | None:
    if not isinstance(cookies, list) or not cookies or not user_agent:
        return None
    parsed = tuple(
        ClearanceCookie(c["name"], c["value"], c["domain"], c.get("path") or "/", c.get("expires"))
        for c in cookies
        if isinstance(c, dict) and {"name", "value", "domain"} <= c.keys()
    )
    return Clearance(parsed, user_agent, via) if parsed else None


class PassFailed(Exception):
    """A way of passing (browser, solver) did not get past the challenge; the message says why."""


class Passer(Protocol):
    name: str  # "browser" or "solver"

    def pass_challenge(self, url: str) -> Clearance:
        """Get past the challenge at `url`; raises PassFailed."""
