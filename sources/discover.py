"""Look at a site before it is added: where it is installed, which theme it runs and how it prints things.

From the URL an operator pastes, the probe finds:
- the site's base URL, sub-path included (a WordPress under `/x/` is read off
  its own asset and API links, so `https://example.com/x/manga/foo/` gives
  `https://example.com/x`);
- its theme (`themes.detect_theme`, on the home page and Madara's archive);
- its manga directory (`manga_path`): the directory the home page's manga
  links sit in ("comic", "series", ...), else the first of the usual
  directories whose archive lists mangas;
- its language, from `<html lang>`, for month names, relative dates and
  status words;
- its numeric date order, from the dates a few mangas' chapter lists print,
  when a sample settles it (`dates.infer_numeric_format`);
- the other hosts its covers and pages come from (an image CDN), which
  become `image_hosts`: the crawl refuses any host it was not told of.

Every request goes through the crawler's own HTTP client and host guard,
bound to the typed URL's origin: a redirect to another host (or to an
internal address the page points at) is refused before it is requested,
exactly as for a source being crawled. Only non-default findings become
settings; each finding is also said in words for the operator, who can
correct any of them (`add_source --set`, the Sources page's settings box).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from selectolax.parser import HTMLParser

from fetch.page_body import is_markup
from sources import selectors
from sources.answers import FetchedPage
from sources.clearance.passers import challenge_handler
from sources.clearance.planning import MemoryStore
from sources.clearance.records import Clearance
from sources.config import HtmlSourceConfig
from sources.cookies import SourceCookies
from sources.dates import infer_numeric_format, known_language
from sources.errors import CrawlerError, SourceConfigError
from sources.hosts import HostGuard, parse_host_rule
from sources.http import SourceHttp
from sources.json_parsing import NotJson, decode_answer
from sources.mangadex.records import SITE, is_mangadex_address
from sources.page_images import parse_page_images
from sources.presets import PRESETS
from sources.probes import PROBES, EndpointProbe
from sources.site_urls import path_under, sibling_api_origin, site_url
from sources.themes import ThemeDetection, detect_theme

if TYPE_CHECKING:
    from sources.browser import BrowserManager

logger = logging.getLogger(__name__)

# Madara's archive, newest first: where its paging (pages or "load more") shows.
MADARA_ARCHIVE = "/{manga_path}/?m_orderby=latest"
PROBE_ID = "new-site"
DEFAULT_MANGA_PATH = "manga"
DATE_SAMPLE_MANGAS = 5  # mangas whose chapters the probe reads for a numeric date order (fewer once one settles it)
# The directories the families' sites list mangas under, most common first (a guess only when the home page
# links no manga).
USUAL_MANGA_PATHS = ("manga", "series", "comic", "comics", "webtoon", "webtoons", "manhwa", "komik", "manhua")
_WORDPRESS_MARKERS = ("/wp-content/", "/wp-includes/", "/wp-json/")
_PRESETS_WITH_DIRECTORY = frozenset({"madara", "madara-load-more", "mangathemesia"})


class SiteUnreadable(CrawlerError):
    """The URL is not a site we can read (bad URL, refused, unreachable, an error page)."""


@dataclass(frozen=True)
class SiteProbe:
    base_url: str  # scheme://host[:port][/sub/path], what the source row stores
    title: str  # the home page's <title>, a default for the source's name
    detection: ThemeDetection
    settings: dict[str, Any] = field(default_factory=dict)  # what was found beyond the preset's defaults
    findings: tuple[str, ...] = ()  # each finding in words, for the operator
    # The pass of the site's JavaScript challenge, when it had one: handed to the new source (no second pass).
    clearance: Clearance | None = None
    kind: str = "html"  # the Source kind: "mangadex" for MangaDex, read through its API

    def source_settings(self) -> dict[str, Any]:
        """The settings a source of this site starts with: the preset, then what the probe found."""
        return {**({"preset": self.detection.preset} if self.detection.preset else {}), **self.settings}


def site_address(url: str) -> str:
    """The typed URL normalised (scheme added, host lower-cased, path kept); SiteUnreadable when it is no site."""
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
    path = parts.path if parts.path.endswith("/") else parts.path.rsplit("/", 1)[0] + "/"
    return f"{parts.scheme}://{parts.netloc.lower()}{path}"


def wordpress_base(html: str, page_url: str) -> str | None:
    """Where a WordPress is installed, read off the page's own asset and API links on its host; None if none."""
    page = urlsplit(page_url)
    prefixes: Counter[str] = Counter()
    for node in HTMLParser(html).css("link[href], script[src], img[src], a[href]"):
        raw = node.attributes.get("href") or node.attributes.get("src") or ""
        url = urlsplit(urljoin(page_url, raw.strip()))
        if url.netloc.lower() != page.netloc.lower():
            continue
        for marker in _WORDPRESS_MARKERS:
            if marker in url.path:
                prefixes[url.path.split(marker, 1)[0]] += 1
                break
    if not prefixes:
        return None
    prefix = prefixes.most_common(1)[0][0].rstrip("/")
    return f"{page.scheme}://{page.netloc.lower()}{prefix}"


def manga_path_from_links(html: str, base_url: str, anchor_selector: str) -> tuple[str, int] | None:
    """The directory the page's manga links (`anchor_selector`) sit in under `base_url`, and how many say so."""
    found: Counter[str] = Counter()
    for node in selectors.select(HTMLParser(html), anchor_selector):
        segments = path_under(base_url, urljoin(base_url + "/", (node.attributes.get("href") or "").strip()))
        if segments and len(segments) >= 2:
            found["/".join(segments[:-1])] += 1
    if not found:
        return None
    return found.most_common(1)[0]


def site_language(html: str) -> str | None:
    """The primary language of `<html lang="es-ES">` ("es") when the date parser knows it; None otherwise."""
    node = HTMLParser(html).css_first("html")
    raw = (node.attributes.get("lang") or "") if node is not None else ""
    code = re.split(r"[-_]", raw.strip().lower(), maxsplit=1)[0]
    return code if code and known_language(code) else None


def _title(html: str) -> str:
    node = HTMLParser(html).css_first("title")
    text = node.text(strip=True) if node is not None else ""
    return text.split(" - ")[-1].split(" | ")[-1].strip() or text


class _Prober:
    """One probe's requests, through one client bound to the site's origin, past its challenge if it has one."""

    def __init__(self, address: str, browser: BrowserManager | None) -> None:
        # The api.<host> sibling is asked too (Iken's API lives there on some sites), unless its very name
        # is refused (api.localhost): then only the typed site is.
        sibling = urlsplit(sibling_api_origin(address)).netloc
        try:
            parse_host_rule(sibling)
        except SourceConfigError:
            sibling = ""
        guard, cookies = HostGuard(PROBE_ID, address, (sibling,) if sibling else ()), SourceCookies()
        self.browser = browser
        # One store for the probe's own requests and the adapter that samples chapters: one pass at most.
        self.store = MemoryStore()
        self.challenges = challenge_handler(PROBE_ID, cookies, self.store, browser=browser, url_allowed=guard.allows)
        self.http = SourceHttp(PROBE_ID, guard, cookies, challenges=self.challenges)
        self.findings: list[str] = []
        self.settings: dict[str, Any] = {}

    def page(self, url: str) -> FetchedPage:
        try:
            answer = self.http.request_page(url)
        except CrawlerError as exc:
            raise SiteUnreadable(str(exc).replace(f"source {PROBE_ID!r}: ", "")) from exc
        if not is_markup(answer.content_type):  # nothing of a non-page answer is shown (its title included)
            raise SiteUnreadable(f"{answer.url} answered {answer.content_type}, not an HTML page")
        return answer

    def optional_page(self, url: str) -> FetchedPage | None:
        try:
            answer = self.http.request_page(url, check=False)
        except CrawlerError:
            return None
        return answer if answer.status == 200 and is_markup(answer.content_type) else None

    def base_and_home(self, address: str) -> tuple[str, FetchedPage]:
        """The site's base URL and its home page, starting from the typed address (the host's root if it fails).

        A WordPress says where it is installed; a site that is not WordPress (ManhwaZ) is taken at the
        host's root when the typed address is one of its pages (the root names a theme), else as typed.
        """
        parts = urlsplit(address)
        origin = f"{parts.scheme}://{parts.netloc}"
        try:
            first = self.page(address)
        except SiteUnreadable:
            if address == origin + "/":
                raise
            first, address = self.page(origin + "/"), origin + "/"
        wordpress = wordpress_base(first.html, first.url)
        if wordpress is None and address != origin + "/":
            root = self.optional_page(origin + "/")
            if root is not None and detect_theme(root.html).detected:
                return origin, root
        base = wordpress or address.rstrip("/")
        if path := urlsplit(base).path.rstrip("/"):
            how = "its WordPress links say so" if wordpress else "as typed"
            self.findings.append(f"installed under {path}/ ({how})")
        if site_url(base, "/") == first.url.split("?")[0].split("#")[0]:
            return base, first
        return base, self.page(site_url(base, "/"))

    def json_answer(self, url: str) -> Any:
        """The JSON an endpoint answers with 200, else None (refused, unreachable, an error, not JSON)."""
        try:
            answer = self.http.request_page(url, check=False)
        except CrawlerError:
            return None
        if answer.status != 200:
            return None
        try:
            return decode_answer(answer.html, answer.content_type)
        except NotJson:
            return None

    def endpoint_family(self, base: str) -> ThemeDetection | None:
        """The first JSON family whose endpoint answers in its shape (`probes.PROBES`); None when none does."""
        for probe in PROBES:
            for origin in probe_origins(probe, base):
                if probe.judge(self.json_answer(origin + probe.path)):
                    where = "" if origin == base.rstrip("/") else f" on {origin}"
                    if probe.on_api_sibling and origin != sibling_api_origin(base):
                        self.settings["api_base"] = "{base}" if origin == base.rstrip("/") else origin
                    self.findings.append(f"{probe.preset}: {probe.clue}{where}")
                    return ThemeDetection(probe.preset, (probe.clue + where,), ((probe.preset, 1),))
        return None

    def manga_path(self, base: str, home: FetchedPage, preset: str) -> str:
        found = manga_path_from_links(home.html, base, PRESETS[preset]["list_anchor"])
        if found is not None:
            path, count = found
            self.findings.append(f"manga path /{path}/ (from {count} manga link(s) on the home page)")
            return path
        return self._usual_manga_path(base, preset)

    def _usual_manga_path(self, base: str, preset: str) -> str:
        """The first usual directory whose archive lists mangas (the home page links none)."""
        for path in USUAL_MANGA_PATHS:
            config = HtmlSourceConfig.from_settings({"preset": preset, "manga_path": path}, source_id=PROBE_ID)
            url = site_url(base, config.list_url.format(page=1, page_index=0, manga_path=path))
            answer = self.optional_page(url)
            if answer is not None and selectors.has_match(answer.html, config.list_anchor):
                self.findings.append(f"manga path /{path}/ (its archive lists mangas)")
                return path
        self.findings.append(
            f"manga path not found (no manga links on the home page, no archive under {', '.join(USUAL_MANGA_PATHS)});"
            f" assuming /{DEFAULT_MANGA_PATH}/: set manga_path if the list is elsewhere"
        )
        return DEFAULT_MANGA_PATH

    def sample_chapters(self, base: str, settings: dict[str, Any]) -> None:
        """Read a few mangas as a crawl would: their numeric date order, and the image hosts their pages use."""
        from sources.html import HtmlSource

        config = HtmlSourceConfig.from_settings(settings, source_id=PROBE_ID)
        source = HtmlSource(PROBE_ID, base, config, browser=self.browser, clearance_store=self.store)
        images: list[str] = []
        try:
            for ref in _first_refs(source, DATE_SAMPLE_MANGAS):
                detail = source.manga_detail(ref)
                if not images and detail.chapters:
                    images = [detail.cover_url, *self._page_images(detail.chapters[0].url, config)]
                if infer_numeric_format(source.notes.date_samples).format is not None and images:
                    break
        except CrawlerError as exc:  # the dry run that follows names the fault
            logger.info("probe of %s: chapters not sampled: %s", base, exc)
        finally:
            source.close()
        self._image_hosts(base, images)
        self._numeric_dates(source.notes.date_samples, config.date_language)

    def _page_images(self, chapter_url: str, config: HtmlSourceConfig) -> list[str]:
        answer = self.optional_page(chapter_url)
        return parse_page_images(answer.html, answer.url, config) if answer is not None else []

    def _image_hosts(self, base: str, images: list[str]) -> None:
        """Image CDNs on other hosts (a MangaThemesia site's `cdn.` host): the source may fetch from them."""
        site = urlsplit(base).netloc.lower()
        hosts = sorted({urlsplit(url).netloc.lower() for url in images if url} - {site, ""})
        if hosts:
            self.settings["image_hosts"] = hosts
            self.findings.append(f"images served from {', '.join(hosts)} (the first manga's cover and pages)")

    def _numeric_dates(self, samples: list[str], language: str) -> None:
        verdict = infer_numeric_format(samples)
        if verdict.format is not None:
            self.settings["chapter_date_formats"] = [verdict.format]
            self.findings.append(f"chapter dates {verdict.format} ({verdict.why}, {verdict.samples} sample(s))")
        elif verdict.numeric:
            order = "month first" if language == "en" else "day first"
            self.findings.append(
                f"chapter dates: {verdict.why}; until then they are read {order}, as {language} sites print them"
            )
        elif samples:
            self.findings.append(f"chapter dates printed like {samples[0]!r}")


def endpoint_claims(base: str) -> dict[str, str]:
    """Every JSON family whose endpoint answers in its shape on the site at `base`, with the origin that did.

    The probe stops at the first family; this asks them all, through the same guarded client, for the
    detection table and for an operator wondering why a site was named what it was.
    """
    prober = _Prober(site_address(base), None)
    try:
        return {
            probe.preset: origin
            for probe in PROBES
            for origin in reversed(probe_origins(probe, base))
            if probe.judge(prober.json_answer(origin + probe.path))
        }
    finally:
        prober.http.close()


def probe_origins(probe: EndpointProbe, base: str) -> list[str]:
    """Where a probe asks: the api.<host> sibling first for a family whose API may live there, then the site."""
    own = base.rstrip("/")
    return [sibling_api_origin(base), own] if probe.on_api_sibling else [own]


def _first_refs(source: Any, count: int) -> list[Any]:
    """The first `count` mangas of the list, from as few list pages as hold them (three at the most)."""
    refs: list[Any] = []
    for number in (1, 2, 3):
        page, more = source.list_page(number)
        refs += page
        if len(refs) >= count or not more:
            break
    return refs[:count]


def probe_site(url: str, *, browser: BrowserManager | None = None) -> SiteProbe:
    """Fetch the site behind `url` and find its base URL, theme, manga path, language and date order.

    A JavaScript challenge is passed in `browser` (add_source starts one) or by the configured solver (the
    web process); where neither can, SiteUnreadable names the challenge and what to configure.
    """
    address = site_address(url)
    if is_mangadex_address(address):
        # Read through its public API, not its pages: known by its host, nothing fetched here.
        return SiteProbe(SITE, "MangaDex", ThemeDetection(None, ("the mangadex.org host",), ()), kind="mangadex")
    prober = _Prober(address, browser)
    try:
        base, home = prober.base_and_home(address)
        detection = detect_theme(home.html)
        preset = detection.preset
        language = site_language(home.html)
        if language and language != "en":
            prober.settings["date_language"] = language
        if language:
            prober.findings.append(f"language {language} (from <html lang>)")
        if preset in _PRESETS_WITH_DIRECTORY:
            path = prober.manga_path(base, home, preset)
            if path != DEFAULT_MANGA_PATH:
                prober.settings["manga_path"] = path
            if preset in ("madara", "madara-load-more"):
                archive = prober.optional_page(site_url(base, MADARA_ARCHIVE.format(manga_path=path)))
                if archive is not None:
                    detection = detect_theme(home.html, archive.html)
        if detection.preset is None:
            detection = prober.endpoint_family(base) or detection
        if detection.preset is not None:
            prober.sample_chapters(base, {"preset": detection.preset, **prober.settings})
        settings, findings = dict(prober.settings), tuple(prober.findings)
        clearance = prober.store.clearance or prober.challenges.clearance
        return SiteProbe(base, _title(home.html), detection, settings, findings, clearance)
    finally:
        prober.http.close()
