"""Theme detection: the pure decision on each fixture theme's pages, and the probe that fetches them."""

from __future__ import annotations

import httpx
import pytest

from sources.discover import SiteUnreadable, probe_site, site_address
from sources.themes import detect_theme
from testsupport.theme_sites.plain import HOME as PLAIN_HOME


def get(url: str) -> str:
    return httpx.get(url, follow_redirects=True).text


def test_madara_home_and_paged_archive_are_madara(madara_site):
    found = detect_theme(get(madara_site.base_url + "/"), get(madara_site.base_url + "/manga/?m_orderby=latest"))
    assert found.preset == "madara"
    assert "Madara theme assets (/wp-content/themes/madara/)" in found.clues
    assert dict(found.scores)["mangathemesia"] == 0


def test_a_load_more_archive_is_the_load_more_flavour(madara_load_more_site):
    base = madara_load_more_site.base_url
    found = detect_theme(get(base + "/"), get(base + "/manga/?m_orderby=latest"))
    assert found.preset == "madara-load-more"
    assert found.clues[-1] == "load-more archive (nav.navigation-ajax)"


def test_the_archive_decides_the_paging_over_the_home_page(madara_site, madara_load_more_site):
    load_more_home = get(madara_load_more_site.base_url + "/")
    assert detect_theme(load_more_home).preset == "madara-load-more"
    assert detect_theme(load_more_home, get(madara_site.base_url + "/manga/")).preset == "madara"


def test_mangathemesia_home_is_mangathemesia(mangathemesia_site):
    found = detect_theme(get(mangathemesia_site.base_url + "/"))
    assert found.preset == "mangathemesia"
    assert found.clues == (
        "MangaThemesia theme assets (/wp-content/themes/mangareader/ or its earlier mangastream/)",
        "MangaThemesia cards (.listupd .bs .bsx)",
    )


def test_a_stock_wordpress_blog_matches_no_theme_and_says_which_preset_to_pick():
    found = detect_theme(PLAIN_HOME)
    assert (found.preset, found.clues) == (None, ())
    assert dict(found.scores) == dict.fromkeys(
        ("madara", "mangathemesia", "mmrcms", "wpcomics", "keyoapp", "foolslide"), 0
    )
    message = found.explain("https://blog.example")
    assert message.startswith("no known manga theme found on https://blog.example. Pick the preset by hand")
    for preset in ("madara:", "madara-load-more:", "mangathemesia:"):
        assert preset in message


def test_one_class_name_alone_is_not_a_theme():
    page = "<html><body><div class='page-item-detail'>a card</div><div class='hpage'></div></body></html>"
    found = detect_theme(page)
    assert found.preset is None
    assert "weak clues only" in found.explain("https://x.example")


def test_equal_evidence_for_both_themes_names_neither():
    page = "<link href='/wp-content/themes/madara/style.css'><link href='/wp-content/themes/mangareader/style.css'>"
    assert detect_theme(page).preset is None


@pytest.mark.parametrize(
    ("typed", "address"),
    [
        ("https://Example.com/manga/x/", "https://example.com/manga/x/"),
        ("https://Example.com/x/index.php", "https://example.com/x/"),
        ("example.com", "https://example.com/"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/"),
    ],
)
def test_site_address_keeps_scheme_origin_and_path(typed, address):
    assert site_address(typed) == address


@pytest.mark.parametrize("typed", ["ftp://example.com", "http://user:pw@example.com", "http://:80", "http://x:99999"])
def test_site_address_refuses_what_is_not_a_site(typed):
    with pytest.raises(SiteUnreadable):
        site_address(typed)


def test_probe_fetches_home_and_archive_through_the_crawler_client(madara_load_more_site):
    probe = probe_site(madara_load_more_site.base_url + "/manga/some-title/")
    assert (probe.base_url, probe.title, probe.detection.preset) == (
        madara_load_more_site.base_url,
        "Madara Fixture",
        "madara-load-more",
    )
    # The typed page (a 404 here: the host's root then), the home page, the archive, then one manga's chapters.
    seen = [(r.method, r.path) for r in madara_load_more_site.server.requests]
    assert seen[:4] == [
        ("GET", "/manga/some-title/"),
        ("GET", "/"),
        ("GET", "/manga/"),
        ("POST", "/wp-admin/admin-ajax.php"),
    ]
    assert "Mangalord" in madara_load_more_site.server.requests[0].headers["user-agent"]


def test_probe_of_a_plain_site_detects_nothing(plain_site):
    probe = probe_site(plain_site.base_url)
    assert probe.detection.preset is None and probe.title == "Plain Blog"


def test_probe_refuses_a_redirect_to_another_host(plain_site, madara_site):
    from testsupport.theme_sites.server import FixtureServer, redirect

    hop = FixtureServer(lambda request: redirect("http://10.0.0.5/admin"), "redirecting-site")
    try:
        with pytest.raises(SiteUnreadable, match="refusing to fetch redirect target .*'http://10.0.0.5/admin'"):
            probe_site(hop.base_url)
    finally:
        hop.stop()


def test_probe_of_a_dead_address_says_it_cannot_be_fetched(plain_site):
    port = plain_site.base_url.rsplit(":", 1)[1]
    plain_site.stop()
    with pytest.raises(SiteUnreadable, match=f"fetching http://127.0.0.1:{port}/ failed"):
        probe_site(plain_site.base_url)
