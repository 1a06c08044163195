"""Which manga theme a site runs, read from its pages: Madara (and "load more"), MangaThemesia, ManhwaZ, and the
plain-HTML readers MMRCMS, WPComics and FoOlSlide. (The JSON families are told by their endpoints: `probes`.)

Pure functions over HTML text. The evidence is what the themes ship and no
other site prints: their asset paths (`/wp-content/themes/madara/`, the
`madara-core` plugin, `/wp-content/themes/mangareader/` of Themesia's
MangaReader theme), the script data the Madara plugin localises
(`wp-manga-js-extra`), and the markup their templates print (Madara's
`div.page-item-detail` cards and chapter holder, MangaThemesia's
`.listupd .bs .bsx` cards, `div.hpage` paging and `ts_reader.run`). An
archive whose paging is `nav.navigation-ajax` (a "Load more" button posting
`madara_load_more`) is the load-more flavour, as the long-maintained Madara
scrapers decide it.

ManhwaZ copies Madara's markup (cards, `li.wp-manga-chapter`,
`div.page-break`) on a site that is not WordPress at all: Madara's markup
with no WordPress anywhere on the pages (`/wp-content/`, `/wp-includes/`,
`/wp-json/`, the generator tag) is named `manhwaz`, never `madara`, whose
ajax endpoints such a site does not have.

The plain-HTML readers print their own markup on every page: My Manga
Reader CMS its `div.mangalist div.manga-item` list and `/latest-release`
links, WPComics (NetTruyen style) its `div.items div.item` cards and the
`/tim-truyen` search, Keyoapp its `div.group.border` cards with background-image
covers, FoOlSlide its `div.group` / `div.element` lists and its
`/content/themes/` assets.

One clue is never enough: a theme is named only when its evidence scores
at least `THRESHOLD` and beats the other theme's, so a blog that happens to
use one class name stays undetected and the operator is told to pick a
preset by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.parser import HTMLParser

THRESHOLD = 2


@dataclass(frozen=True)
class Clue:
    """One piece of evidence: a CSS selector or an asset/script pattern, and what it weighs."""

    label: str
    weight: int
    selector: str | None = None
    pattern: re.Pattern[str] | None = None

    def found_in(self, tree: HTMLParser, text: str) -> bool:
        if self.selector is not None:
            return tree.css_first(self.selector) is not None
        return self.pattern is not None and self.pattern.search(text) is not None


# Asset paths weigh 2: a theme's own files are the surest sign; markup alone needs two clues.
MADARA_CLUES = (
    Clue("Madara theme assets (/wp-content/themes/madara/)", 2, pattern=re.compile(r"/wp-content/themes/madara[/-]")),
    Clue("madara-core plugin assets", 2, pattern=re.compile(r"/wp-content/plugins/madara-core/")),
    Clue("WP-Manga script data (wp-manga-js-extra)", 1, selector="script#wp-manga-js-extra"),
    Clue("Madara body class", 1, selector="body[class*=wp-theme-madara]"),
    Clue("Madara manga cards (div.page-item-detail)", 1, selector="div.page-item-detail"),
    Clue("Madara chapter holder", 1, selector="div[id^=manga-chapters-holder]"),
    Clue("Madara chapter list (li.wp-manga-chapter)", 1, selector="li.wp-manga-chapter"),
)
MANGATHEMESIA_CLUES = (
    Clue(
        "MangaThemesia theme assets (/wp-content/themes/mangareader/ or its earlier mangastream/)",
        2,
        pattern=re.compile(r"/wp-content/themes/(?:mangareader|mangastream)[/-]"),
    ),
    Clue("MangaThemesia cards (.listupd .bs .bsx)", 1, selector=".listupd .bs .bsx"),
    Clue("MangaThemesia update list (.utao .uta .imgu)", 1, selector=".utao .uta .imgu"),
    Clue("MangaThemesia paging (div.hpage)", 1, selector="div.hpage"),
    Clue("MangaThemesia chapter list (#chapterlist)", 1, selector="#chapterlist li"),
    Clue("MangaThemesia reader script (ts_reader.run)", 2, pattern=re.compile(r"ts_reader\.run\(")),
)
LOAD_MORE_SELECTOR = "nav.navigation-ajax, #navigation-ajax"
WORDPRESS = re.compile(
    r"/wp-content/|/wp-includes/|/wp-json/|wp-emoji|wp-theme-|<meta[^>]+generator[^>]+WordPress", re.I
)
MANHWAZ_CLUES = (
    Clue("ManhwaZ slider (#slide-top .item)", 1, selector="#slide-top .item"),
    Clue("ManhwaZ pager (ul.pager)", 1, selector="ul.pager"),
)

# The plain-HTML reader families, none of them WordPress; each is named only when its own clues score enough.
FAMILY_CLUES = {
    "mmrcms": (
        Clue("MMRCMS latest list (div.mangalist div.manga-item)", 1, selector="div.mangalist div.manga-item"),
        Clue(
            "MMRCMS pages (/latest-release, /filterList)",
            1,
            selector="a[href*='/latest-release'], a[href*='/filterList']",
        ),
        Clue("MMRCMS chapter rows (.chapter-title-rtl)", 1, selector=".chapter-title-rtl"),
    ),
    "wpcomics": (
        Clue("WPComics cards (div.items div.item figure)", 1, selector="div.items div.item figure"),
        Clue("WPComics search (/tim-truyen)", 1, selector="form[action*='/tim-truyen'], a[href*='/tim-truyen']"),
        Clue("WPComics detail (article#item-detail)", 1, selector="article#item-detail"),
    ),
    "keyoapp": (
        Clue(
            "Keyoapp cards (div.group.border with a background-image cover)",
            1,
            selector="div.grid > div.group.border [style*=background-image]",
        ),
        Clue(
            "Keyoapp series links (div.group a[title] to /series/)", 1, selector="div.group a[title][href*='/series/']"
        ),
        Clue("Keyoapp reader script (realUrl)", 2, pattern=re.compile(r"realUrl\s*=\s*`")),
    ),
    "foolslide": (
        Clue("FoOlSlide theme assets (/content/themes/)", 1, pattern=re.compile(r"/content/themes/[\w-]+/")),
        Clue("FoOlSlide lists (div.group div.element)", 1, selector="div.group div.element div.meta_r"),
        Clue("FoOlSlide reader script (var pages =)", 1, pattern=re.compile(r"var\s+pages\s*=\s*\[")),
    ),
}

PRESET_HINTS = {
    "madara": "WordPress Madara theme: /manga/ archive paged as /manga/page/N/, div.page-item-detail cards",
    "madara-load-more": "Madara whose archive has a 'Load more' button instead of page links",
    "mangathemesia": "WordPress MangaThemesia (MangaReader) theme: .listupd .bs .bsx cards, ts_reader chapters",
    "manhwaz": "ManhwaZ: Madara-like cards and chapter lists on a site that is not WordPress, latest list at /?page=N",
    "mmrcms": "My Manga Reader CMS: /latest-release?page=N, div.mangalist div.manga-item, ul.chapters",
    "wpcomics": "WPComics (NetTruyen style): div.items div.item cards, article#item-detail, div.list-chapter",
    "keyoapp": "Keyoapp: div.group.border cards, #chapters > a rows, #pages > img[uid] joined to realUrl's CDN",
    "foolslide": "FoOlSlide: /latest/N/, div.group/div.element lists, var pages = [...] in the reader",
    "zeistmanga": "ZeistManga: a Blogger blog with Series and Chapter labels (found by its JSON feed)",
    "pizzareader": "PizzaReader: a JSON API at /api/comics",
    "iken": "Iken: a Next.js site with a JSON API at /api/query (on the site or api.<host>)",
}


@dataclass(frozen=True)
class ThemeDetection:
    """The preset a site's pages point to (None: no known theme), with the clues that decided it."""

    preset: str | None
    clues: tuple[str, ...]
    scores: tuple[tuple[str, int], ...]  # (theme, score) for both themes, for the operator's eyes

    @property
    def detected(self) -> bool:
        return self.preset is not None

    def explain(self, url: str) -> str:
        """One paragraph for the operator: what was found, or which preset to pick by hand."""
        if self.preset is not None:
            return f"{url} runs the {self.preset} theme ({'; '.join(self.clues)})."
        hints = "; ".join(f"{name}: {hint}" for name, hint in PRESET_HINTS.items())
        found = f" (weak clues only: {'; '.join(self.clues)})" if self.clues else ""
        return (
            f"no known manga theme found on {url}{found}. Pick the preset by hand if the site runs one of them "
            f"({hints}), or configure the selectors yourself (docs/sources.md#any-other-site-settings-key-by-key)."
        )


def _found(clues: tuple[Clue, ...], pages: list[tuple[HTMLParser, str]]) -> list[Clue]:
    return [clue for clue in clues if any(clue.found_in(tree, text) for tree, text in pages)]


def markup_claims(home_html: str, archive_html: str | None = None) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Each markup detector's verdict on a site's pages: the families that claim it, with score and clues.

    A detector claims on its own evidence, whatever the others find: Madara only where WordPress shows
    (ManhwaZ copies its markup without it), ManhwaZ only where it does not.
    """
    pages = [(HTMLParser(text), text) for text in (home_html, archive_html) if text]
    wordpress = any(WORDPRESS.search(text) for _, text in pages)
    madara = _found(MADARA_CLUES, pages)
    found = {
        "madara": madara if wordpress else [],
        "mangathemesia": _found(MANGATHEMESIA_CLUES, pages),
        "manhwaz": [] if wordpress else madara + _found(MANHWAZ_CLUES, pages),
        **{name: _found(clues, pages) for name, clues in FAMILY_CLUES.items()},
    }
    scored = {name: (sum(c.weight for c in clues), tuple(c.label for c in clues)) for name, clues in found.items()}
    return {name: verdict for name, verdict in scored.items() if verdict[0] >= THRESHOLD}


def detect_theme(home_html: str, archive_html: str | None = None) -> ThemeDetection:
    """The theme of a site from its home page and, when fetched, its manga archive page.

    The archive (Madara's `/manga/`) decides between paged and load-more
    archives when given, since the home page of a paged site may still show
    a load-more block; otherwise the home page decides.
    """
    pages = [(HTMLParser(text), text) for text in (home_html, archive_html) if text]
    families = {name: sum(c.weight for c in _found(clues, pages)) for name, clues in FAMILY_CLUES.items()}
    family = max(families, key=lambda name: families[name])
    madara = _found(MADARA_CLUES, pages)
    themesia = _found(MANGATHEMESIA_CLUES, pages)
    madara_score, themesia_score = sum(c.weight for c in madara), sum(c.weight for c in themesia)
    scores = (("madara", madara_score), ("mangathemesia", themesia_score), *families.items())
    if families[family] >= THRESHOLD and families[family] > max(madara_score, themesia_score):
        clues = tuple(c.label for c in _found(FAMILY_CLUES[family], pages))
        return ThemeDetection(family, clues, scores)
    if not any(WORDPRESS.search(text) for _, text in pages):
        lookalike = madara + _found(MANHWAZ_CLUES, pages)
        score = sum(c.weight for c in lookalike)
        if score >= THRESHOLD and score > themesia_score:
            labels = (*(c.label for c in lookalike), "no WordPress on the pages (not Madara)")
            return ThemeDetection("manhwaz", labels, (*scores, ("manhwaz", score)))
    if madara_score >= THRESHOLD and madara_score > themesia_score:
        labels = tuple(c.label for c in madara)
        paging_tree = pages[-1][0]  # the archive when fetched, else the home page
        if paging_tree.css_first(LOAD_MORE_SELECTOR) is not None:
            return ThemeDetection("madara-load-more", (*labels, "load-more archive (nav.navigation-ajax)"), scores)
        return ThemeDetection("madara", labels, scores)
    if themesia_score >= THRESHOLD and themesia_score > madara_score:
        return ThemeDetection("mangathemesia", tuple(c.label for c in themesia), scores)
    return ThemeDetection(None, tuple(c.label for c in madara + themesia), scores)
