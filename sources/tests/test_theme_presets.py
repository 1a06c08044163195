"""Madara and MangaThemesia sites crawled by preset alone: a metadata pass and `crawl_worker --drain` over HTTP.

The fixture sites (testsupport.theme_sites) serve each theme's markup and
endpoints; the only settings are the preset (plus the CDN host for
MangaThemesia). Everything the site shows must be stored, pages byte-identical.
"""

from __future__ import annotations

import pytest

from crawler import state_store
from jobs.models import Job
from testsupport.theme_sites.expect import (
    check_full_crawl,
    crawl,
    madara_key,
    madara_source,
    themesia_key,
    themesia_source,
)
from testsupport.theme_sites.madara import MadaraSite

pytestmark = pytest.mark.django_db(transaction=True)


def test_madara_preset_stores_every_manga_chapter_date_and_page(madara_site):
    row = madara_source(madara_site)
    crawl(row.id)
    stored = check_full_crawl(row, madara_site.catalog, madara_key, relative_dates=True)
    assert (stored.mangas, stored.covers, stored.chapters, stored.dates, stored.pages) == (5, 5, 12, 12, 36)
    # Newer theme: the old admin-ajax endpoint answered 400 and the manga's own endpoint served the list.
    assert len(madara_site.server.hits("POST", "/wp-admin/admin-ajax.php")) == 5
    assert len([r for r in madara_site.server.hits("POST", "/manga/") if r.path.endswith("/ajax/chapters/")]) == 5
    assert state_store.last_run_clean(row.id)


def test_madara_old_chapter_endpoint_is_used_when_the_site_still_answers_it():
    site = MadaraSite(old_endpoint=True)
    try:
        row = madara_source(site)
        crawl(row.id)
        check_full_crawl(row, site.catalog, madara_key, relative_dates=True)
        assert not [r for r in site.server.hits("POST", "/manga/") if r.path.endswith("/ajax/chapters/")]
    finally:
        site.stop()


def test_madara_load_more_preset_pages_the_list_by_post(madara_site):
    row = madara_source(madara_site, preset="madara-load-more")
    crawl(row.id)
    check_full_crawl(row, madara_site.catalog, madara_key, relative_dates=True)
    pages = [r.form["page"] for r in madara_site.server.hits("POST", "/wp-admin/admin-ajax.php")
             if r.form.get("action") == "madara_load_more"]  # fmt: skip
    assert pages == ["0", "1", "2", "3"]  # the fourth answer is empty: the end of the list
    assert state_store.last_run_clean(row.id)


def test_mangathemesia_preset_stores_every_manga_chapter_date_and_page(mangathemesia_site):
    row = themesia_source(mangathemesia_site)
    crawl(row.id)
    stored = check_full_crawl(row, mangathemesia_site.catalog, themesia_key, relative_dates=False)
    assert (stored.mangas, stored.covers, stored.chapters, stored.dates, stored.pages) == (5, 5, 12, 12, 36)
    # Every page came from the CDN with its chapter page as Referer (it answers 403 otherwise).
    image_hits = mangathemesia_site.cdn.hits("GET", "/uploads/")
    assert image_hits and all(r.referer.startswith(mangathemesia_site.base_url) for r in image_hits)
    assert Job.objects.count() > 0


def test_mangathemesia_site_listing_under_series_takes_one_override():
    from testsupport.theme_sites.mangathemesia import MangaThemesiaSite

    site = MangaThemesiaSite(directory="series")
    try:
        row = themesia_source(site, list_url="/series/?page={page}&order=update")
        crawl(row.id)
        check_full_crawl(row, site.catalog, themesia_key, relative_dates=False)
    finally:
        site.stop()
