"""Is this answer a JavaScript challenge? A pure decision over status, headers and the start of the body.

A challenge is the interstitial a bot shield (Cloudflare, DDoS-Guard, Sucuri,
...) serves instead of the page: a 403/503 whose script computes a token, sets
a clearance cookie and reloads. It is neither an expired session (no login
fixes it) nor a broken page (no selector fixes it): a browser that runs the
script gets through, and so does anything that then presents the cookie it
got with the same User-Agent (`sources.clearance.records`).

The rules, most certain first:
- Cloudflare's `cf-mitigated: challenge` header on any answer: it is Cloudflare
  saying so in words.
- A 403/429/503 whose body carries an interstitial's marker (Cloudflare's
  "Just a moment...", `cf-chl`, `challenge-platform`, `_cf_chl_opt`; DDoS-Guard's
  `ddos-guard` check script; Sucuri's and Imperva's): the page is the shield's,
  whatever the server header says.
- A bare `server: cloudflare` 403/503 without a marker is *not* a challenge:
  it is the origin's own refusal (or a WAF block, which no browser passes)
  relayed by Cloudflare, and stays an ordinary 403/503.
A 200 never counts, whatever it mentions: a page about Cloudflare is a page.

Recognising one reads only what the wire answered, so it sits with the
transports (every transport asks it); what to do about one is crawl policy
(`crawler.clearance`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# The statuses shields serve their interstitials with.
CHALLENGE_STATUSES = frozenset({403, 429, 503})
# How much of a body the markers are looked for in: interstitials put them in the <head>.
SCAN_CHARS = 32 * 1024

# (vendor, marker name, pattern): each a string only the shield's interstitial prints.
_MARKERS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (vendor, name, re.compile(pattern, re.IGNORECASE))
    for vendor, name, pattern in (
        ("cloudflare", "_cf_chl_opt", r"_cf_chl_opt"),
        ("cloudflare", "challenge-platform", r"/cdn-cgi/challenge-platform/"),
        ("cloudflare", "cf-chl", r"\bcf-chl[-_]"),
        ("cloudflare", "Just a moment...", r"<title>\s*Just a moment\.\.\.\s*</title>"),
        ("cloudflare", "cf-browser-verification", r"cf-browser-verification"),
        ("ddos-guard", "ddos-guard check", r"check\.ddos-guard\.net|ddos-guard/js-challenge|__ddg\d?_"),
        ("ddos-guard", "DDoS-Guard title", r"<title>\s*DDoS-Guard\s*</title>"),
        ("sucuri", "sucuri_cloudproxy_js", r"sucuri_cloudproxy_js"),
        ("imperva", "_Incapsula_Resource", r"_Incapsula_Resource"),
    )
)


@dataclass(frozen=True)
class Challenge:
    """What was recognised: the shield, and the header or marker that gave it away."""

    vendor: str
    evidence: str

    def describe(self) -> str:
        return f"a {self.vendor} JavaScript challenge ({self.evidence})"


class StillChallenged(Exception):
    """A browser's page was still a challenge when its wait ran out; the message says what it showed."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value.strip().lower()
    return ""


def detect_challenge(status: int, headers: Mapping[str, str], body: str = "") -> Challenge | None:
    """The challenge this answer is, or None for an ordinary answer (a page, an error, a WAF block)."""
    if _header(headers, "cf-mitigated") == "challenge":
        return Challenge("cloudflare", "cf-mitigated: challenge")
    if status not in CHALLENGE_STATUSES:
        return None
    head = body[:SCAN_CHARS]
    for vendor, name, pattern in _MARKERS:
        if pattern.search(head):
            return Challenge(vendor, f"{status} with the interstitial's {name!r}")
    return None


def may_be_challenge(status: int, headers: Mapping[str, str]) -> bool:
    """Whether the body is worth reading to decide (an image answer is not read otherwise)."""
    return _header(headers, "cf-mitigated") == "challenge" or status in CHALLENGE_STATUSES
