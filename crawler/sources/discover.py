"""Look at a site before it is added: fetch its home page (and Madara's archive) and name its theme.

The requests go through the crawler's own HTTP client and host guard, bound
to the typed URL's origin: a redirect to another host (or to an internal
address the page points at) is refused before it is requested, exactly as
for a source being crawled. The decision itself is `themes.detect_theme`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.errors import CrawlerError
from crawler.sources.hosts import HostGuard
from crawler.sources.http import SourceCookies, SourceHttp
from crawler.sources.page_body import is_markup
from crawler.sources.themes import ThemeDetection, detect_theme

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


def site_root(url: str) -> str:
    """`https://Example.com/manga/x/` -> `https://example.com`; raises SiteUnreadable for a non-http(s) URL."""
    text = url.strip()
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # `http://[::1`, `https://[zz]`: brackets that hold no IPv6 address
        raise SiteUnreadable(f"{url!r} is not a URL: {exc}") from exc
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


def probe_site(url: str) -> SiteProbe:
    """Fetch `url`'s home page (and Madara's archive when the home page says Madara) and detect the theme."""
    base = site_root(url)
    http = SourceHttp(PROBE_ID, HostGuard(PROBE_ID, base), SourceCookies())
    try:
        try:
            home = http.request_page(base + "/")
        except CrawlerError as exc:
            raise SiteUnreadable(str(exc).replace(f"source {PROBE_ID!r}: ", "")) from exc
        if not is_markup(home.content_type):  # nothing of a non-page answer is shown (its title included)
            raise SiteUnreadable(f"{home.url} answered {home.content_type}, not an HTML page")
        detection = detect_theme(home.html)
        if detection.preset in ("madara", "madara-load-more"):
            try:
                archive = http.request_page(base + MADARA_ARCHIVE, check=False)
            except CrawlerError:  # the home page already said Madara; only the paging flavour stays unknown
                archive = None
            if archive is not None and archive.status == 200:
                detection = detect_theme(home.html, archive.html)
        return SiteProbe(base, _title(home.html), detection)
    finally:
        http.close()
