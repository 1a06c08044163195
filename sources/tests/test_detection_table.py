"""Every fixture site against every detector: exactly one detector claims each family's site.

Rows are the fixture sites (one per family, plus a stock WordPress blog no
preset fits), columns the detectors: the markup detectors of
`sources.themes` read the home page (and Madara's archive), the
endpoint detectors of `sources.probes` judge what each family's
probe URL answers (on the `api.<host>` sibling first where the family may
serve its API there, then on the site), asked through the crawler's own
guarded client. The table is printed (pytest -s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sources.discover import endpoint_claims
from sources.probes import PROBES
from sources.themes import FAMILY_CLUES, markup_claims
from testsupport.theme_sites.foolslide import FoOlSlideSite
from testsupport.theme_sites.iken import IkenSite
from testsupport.theme_sites.keyoapp import KeyoappSite
from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.mangathemesia import MangaThemesiaSite
from testsupport.theme_sites.manhwaz import ManhwaZSite
from testsupport.theme_sites.mmrcms import MMRCMSSite
from testsupport.theme_sites.pizzareader import PizzaReaderSite
from testsupport.theme_sites.plain import PlainSite
from testsupport.theme_sites.wpcomics import WPComicsSite
from testsupport.theme_sites.zeistmanga import ZeistMangaSite

pytestmark = pytest.mark.sqlite_ok

# (row, fixture site, the one detector that must claim it; None: no detector may)
ROWS: list[tuple[str, Callable[[], Any], str | None]] = [
    ("madara", MadaraSite, "madara"),
    ("madara load-more", lambda: MadaraSite(load_more=True), "madara"),
    ("mangathemesia", MangaThemesiaSite, "mangathemesia"),
    ("manhwaz", ManhwaZSite, "manhwaz"),
    ("keyoapp", KeyoappSite, "keyoapp"),
    ("wpcomics", WPComicsSite, "wpcomics"),
    ("foolslide", FoOlSlideSite, "foolslide"),
    ("mmrcms", MMRCMSSite, "mmrcms"),
    ("zeistmanga", ZeistMangaSite, "zeistmanga"),
    ("iken", IkenSite, "iken"),
    ("iken, API on api.<host>", lambda: IkenSite(api_sibling=True), "iken"),
    ("pizzareader", PizzaReaderSite, "pizzareader"),
    ("wordpress blog", PlainSite, None),
]
DETECTORS = ["madara", "mangathemesia", "manhwaz", *FAMILY_CLUES, *(p.preset for p in PROBES)]


def claims_of(site: Any) -> set[str]:
    """The detectors that claim `site`: markup detectors on its pages, endpoint detectors on its answers."""
    base = site.base_url
    home = httpx.get(base + "/", follow_redirects=True).text
    archive = httpx.get(base + "/manga/?m_orderby=latest", follow_redirects=True)
    claimed = set(markup_claims(home, archive.text if archive.status_code == 200 else None))
    return claimed | set(endpoint_claims(base))


def test_every_detector_is_a_column_of_the_table():
    assert len(DETECTORS) == len(set(DETECTORS)) == 10
    assert {family for _, _, family in ROWS if family} == set(DETECTORS)


@pytest.mark.parametrize(("row", "make", "family"), ROWS, ids=[row for row, _, _ in ROWS])
def test_exactly_one_detector_claims_each_fixture_site(row, make, family):
    site = make()
    try:
        claimed = claims_of(site)
    finally:
        site.stop()
    print(f"\nDETECTION | {'site':<24} | {' '.join(DETECTORS)}")
    cells = " ".join(("X" if name in claimed else ".").center(len(name)) for name in DETECTORS)
    print(f"\nDETECTION | {row:<24} | {cells}")
    assert claimed == ({family} if family else set()), f"{row}: claimed by {sorted(claimed)}"


def test_an_empty_blogger_feed_or_a_foreign_json_api_is_no_family():
    from sources.probes import is_blogger_manga_feed, is_iken_query, is_pizzareader_catalogue

    assert not is_blogger_manga_feed({"feed": {"openSearch$totalResults": {"$t": "0"}}})
    assert not is_pizzareader_catalogue({"comics": [{"url": "/series/x"}]})
    assert not is_iken_query({"posts": [{"id": 1}], "totalCount": 1})
    assert not is_iken_query([{"posts": []}])
