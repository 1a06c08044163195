"""Look at a site before it is added: fetch its home page (and Madara's archive) and name its theme.

The requests go through the crawler's own HTTP client and host guard, bound
to the typed URL's origin: a redirect to another host (or to an internal
address the page points at) is refused before it is requested, exactly as
for a source being crawled. The decision itself is `themes.detect_theme`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.errors import CrawlerError
from crawler.sources.clearance import Clearance, MemoryStore
from crawler.sources.hosts import HostGuard
from crawler.sources.http import SourceCookies, SourceHttp
from crawler.sources.passers import challenge_handler
from crawler.sources.themes import ThemeDetection, detect_theme

if TYPE_CHECKING:
    from crawler.sources.browser import BrowserManager

# Madara's archive, newest first: where its paging (pages or "load more") shows.
MADARA_ARCHIVE = "/manga/?m_orderby=latest"
PROBE_ID = "new-site"


class SiteUnreadable(CrawlerError):
    """The URL is not a site we can read (bad URL, refused, unreachable, an error page)."""


@dataclass(frozen=True)
class SiteProbe:
    base_url: str  # scheme://host[:port], what the source row stores
    title: str  # the home page's <title>, a default for the source's name
    detection: ThemeDetection
    # The pass of the site's JavaScript challenge, when it had one: handed to the new source (no second pass).
    clearance: Clearance | None = None


def site_root(url: str) -> str:
    """`https://Example.com/manga/x/` -> `https://example.com`; raises SiteUnreadable for a non-http(s) URL."""
    text = url.strip()
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise SiteUnreadable(f"{url!r} has a bad port") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise SiteUnreadable(f"{url!r} is not an http(s) site address like https://example.com")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def _title(html: str) -> str:
    from selectolax.parser import HTMLParser

    node = HTMLParser(html).css_first("title")
    text = node.text(strip=True) if node is not None else ""
    return text.split(" - ")[-1].split(" | ")[-1].strip() or text


def probe_site(url: str, *, browser: BrowserManager | None = None) -> SiteProbe:
    """Fetch `url`'s home page (and Madara's archive when the home page says Madara) and detect the theme.

    A JavaScript challenge is passed in `browser` (add_source starts one) or by the configured solver (the
    web process); where neither can, SiteUnreadable names the challenge and what to configure.
    """
    base = site_root(url)
    guard, cookies = HostGuard(PROBE_ID, base), SourceCookies()
    challenges = challenge_handler(PROBE_ID, cookies, MemoryStore(), browser=browser, url_allowed=guard.allows)
    http = SourceHttp(PROBE_ID, guard, cookies, challenges=challenges)
    try:
        try:
            home = http.request_page(base + "/")
        except CrawlerError as exc:
            raise SiteUnreadable(str(exc).replace(f"source {PROBE_ID!r}: ", "")) from exc
        detection = detect_theme(home.html)
        if detection.preset in ("madara", "madara-load-more"):
            try:
                archive = http.request_page(base + MADARA_ARCHIVE, check=False)
            except CrawlerError:  # the home page already said Madara; only the paging flavour stays unknown
                archive = None
            if archive is not None and archive.status == 200:
                detection = detect_theme(home.html, archive.html)
        return SiteProbe(base, _title(home.html), detection, challenges.clearance)
    finally:
        http.close()
