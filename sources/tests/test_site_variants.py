"""Real sites as they are: every common variant of the theme families, found by the probe and read right.

The variants are the ones the families' real sites use, as the per-site
overrides of the Mihon extensions count them: a manga directory other than
`/manga/` (24 % of Madara sites, 21 % of MangaThemesia's), an install under a
sub-path, the site's language for dates, relative dates and statuses (58-62 %
override the date format), numeric dates in either order, chapter lists
printed without `#chapterlist`, and ManhwaZ, Madara's markup without
WordPress. Each is checked for the whole class (several directories, every
language the fixture sites speak, several sub-paths), not one example: the
probe must find the setting from the site alone, and the adapter built from
what it found must read the site's fields.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from sources.config import HtmlSourceConfig
from sources.discover import probe_site
from sources.html import HtmlSource
from sources.themes import detect_theme
from testsupport.theme_sites.catalog import FixtureManga
from testsupport.theme_sites.locales import LOCALES, PORTUGUESE, US_NUMERIC, SiteLocale
from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.mangathemesia import MangaThemesiaSite
from testsupport.theme_sites.manhwaz import ManhwaZSite

pytestmark = pytest.mark.sqlite_ok

DAY = dt.timedelta(days=1)


def adapter_for(site, probe) -> HtmlSource:
    """The adapter a source of this site gets: exactly the settings the probe found."""
    return HtmlSource("variant", probe.base_url, HtmlSourceConfig.from_settings(probe.source_settings(), source_id="x"))


def read_first_manga(site, probe) -> tuple[FixtureManga, object]:
    source = adapter_for(site, probe)
    try:
        refs, has_next = source.list_page(1)
        assert [r.key for r in refs] == [m.slug for m in site.catalog[:2]] and has_next
        return site.catalog[0], source.manga_detail(refs[0])
    finally:
        source.close()


def assert_detail_right(fixture: FixtureManga, detail, *, every_date_relative: bool = False) -> None:
    assert detail.metadata.title == fixture.title
    assert detail.metadata.alt_titles == fixture.alt_titles
    assert detail.metadata.authors == (fixture.author,)
    assert detail.metadata.status == fixture.status
    assert [c.number for c in detail.chapters] == [c.number for c in fixture.chapters]
    for stored, expected in zip(detail.chapters, fixture.chapters, strict=True):
        assert stored.title == expected.name
        assert stored.published_at is not None, f"chapter {expected.number}: no date"
        tolerance = DAY if every_date_relative or expected.relative else dt.timedelta(0)
        if tolerance:
            assert abs(stored.published_at - expected.published_at) <= tolerance
        else:
            assert stored.published_at == dt.datetime.combine(expected.published_at.date(), dt.time(), dt.UTC)


@pytest.fixture
def started() -> Iterator[list]:
    sites: list = []
    yield sites
    for site in sites:
        site.stop()


# --- the manga directory ---------------------------------------------------------------------------


@pytest.mark.parametrize("directory", ["manga", "comic", "series", "webtoon", "manhwa", "read-online"])
def test_a_madara_site_lists_under_the_directory_its_links_name(directory, started):
    site = MadaraSite(directory=directory)
    started.append(site)
    probe = probe_site(site.base_url)
    assert probe.detection.preset == "madara"
    assert probe.settings.get("manga_path", "manga") == directory
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail)
    assert site.server.hits("GET", f"/{directory}/")  # the archive under the site's own directory


@pytest.mark.parametrize("directory", ["manga", "series", "comics", "komik"])
def test_a_mangathemesia_site_lists_under_the_directory_its_links_name(directory, started):
    site = MangaThemesiaSite(directory=directory)
    started.append(site)
    probe = probe_site(site.base_url)
    assert (probe.detection.preset, probe.settings.get("manga_path", "manga")) == ("mangathemesia", directory)
    assert probe.settings["image_hosts"] == [site.cdn.host_port]
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail)


def test_a_home_page_without_manga_links_falls_back_to_the_archive_that_lists_mangas(started):
    site = MadaraSite(directory="series")
    started.append(site)
    original = site._home
    site._home = lambda: original().replace("page-item-detail", "plain-card")  # no manga cards on the home page
    probe = probe_site(site.base_url)
    assert probe.settings["manga_path"] == "series"
    assert "manga path /series/ (its archive lists mangas)" in probe.findings


# --- an install under a sub-path --------------------------------------------------------------------


@pytest.mark.parametrize("base_path", ["/x", "/manga-reader", "/sites/scans"])
@pytest.mark.parametrize("family", [MadaraSite, MangaThemesiaSite])
def test_a_site_under_a_sub_path_is_read_under_it(family, base_path, started):
    site = family(base_path=base_path)
    started.append(site)
    probe = probe_site(site.base_url + "/")  # the home page, as a user pastes it
    assert probe.base_url == site.base_url and urlsplit(probe.base_url).path == base_path
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail)
    outside = [r.path for r in site.server.requests if not r.path.startswith(base_path + "/")]
    assert outside == [], f"requests outside {base_path}/: {outside}"


def test_a_page_deep_inside_a_sub_path_install_gives_the_install_not_the_page(started):
    site = MadaraSite(base_path="/x")
    started.append(site)
    chapter = site.catalog[1].chapters[0]
    probe = probe_site(site.chapter_url(chapter))
    assert probe.base_url == site.base_url
    assert "installed under /x/ (its WordPress links say so)" in probe.findings


# --- the site's language ----------------------------------------------------------------------------


@pytest.mark.parametrize("language", sorted(LOCALES))
@pytest.mark.parametrize("family", [MadaraSite, MangaThemesiaSite])
def test_dates_statuses_and_labels_are_read_in_the_site_language(family, language, started):
    locale: SiteLocale = LOCALES[language]
    site = family(locale=locale)
    started.append(site)
    probe = probe_site(site.base_url)
    assert probe.settings.get("date_language", "en") == locale.language
    source = adapter_for(site, probe)
    try:
        refs = [ref for page in (1, 2, 3) for ref in source.list_page(page)[0]]
        details = [source.manga_detail(ref) for ref in refs]
    finally:
        source.close()
    for fixture, detail in zip(site.catalog, details, strict=True):
        assert_detail_right(fixture, detail)  # status words, month names, relative phrases, chapter labels
    assert {d.metadata.status for d in details} == {"ongoing", "completed", "hiatus", "cancelled"}


@pytest.mark.parametrize(("locale", "expected"), [(PORTUGUESE, "%d/%m/%Y"), (US_NUMERIC, "%m/%d/%Y")])
def test_numeric_dates_take_the_order_the_samples_settle(locale, expected, started):
    site = MadaraSite(locale=locale)
    started.append(site)
    probe = probe_site(site.base_url)
    assert probe.settings["chapter_date_formats"] == [expected]
    source = adapter_for(site, probe)
    try:
        refs = source.list_page(1)[0] + source.list_page(2)[0]
        for fixture, ref in zip(site.catalog, refs, strict=False):
            assert_detail_right(fixture, source.manga_detail(ref))
    finally:
        source.close()


# --- chapter-list markup and look-alikes -----------------------------------------------------------


def test_a_mangathemesia_list_printed_without_chapterlist_is_read(started):
    site = MangaThemesiaSite(bare_chapter_list=True)
    started.append(site)
    probe = probe_site(site.base_url)
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail)


def test_manhwaz_is_told_apart_from_madara_and_read_with_its_own_preset(started):
    site = ManhwaZSite()
    started.append(site)
    probe = probe_site(site.base_url)
    assert probe.detection.preset == "manhwaz"
    assert "no WordPress on the pages (not Madara)" in probe.detection.clues
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail, every_date_relative=True)
    assert not site.server.hits("POST", "/")  # no admin-ajax.php: the chapters are on the detail page


def test_a_manhwaz_page_pasted_gives_the_site_at_its_root(started):
    site = ManhwaZSite()
    started.append(site)
    probe = probe_site(site.manga_url(site.catalog[1]))
    assert (probe.base_url, probe.detection.preset) == (site.base_url, "manhwaz")
    fixture, detail = read_first_manga(site, probe)
    assert_detail_right(fixture, detail, every_date_relative=True)


def test_madara_markup_on_a_wordpress_site_stays_madara(started):
    site = MadaraSite()
    started.append(site)
    home = site._home()
    # A child theme and no madara-core assets: the markup and WordPress itself still say Madara.
    renamed = home.replace("/themes/madara/", "/themes/child/").replace("/plugins/madara-core/", "/plugins/x/")
    assert detect_theme(renamed).preset == "madara"
