"""The theme presets through real Chromium: script-filled chapter lists and readers are waited for, then parsed.

Madara's detail page fills its chapter holder by ajax after load and
MangaThemesia's reader builds its <img> elements from `ts_reader.run`; the
browser snapshot is taken once the preset's required selector matches.
"""

from __future__ import annotations

import pytest

from testsupport.theme_sites.expect import (
    check_full_crawl,
    crawl,
    madara_key,
    madara_source,
    themesia_key,
    themesia_source,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_madara_preset_through_chromium_sees_the_ajax_chapter_list(madara_site):
    row = madara_source(madara_site, requires_browser=True)
    crawl(row.id)
    stored = check_full_crawl(row, madara_site.catalog, madara_key, relative_dates=True)
    assert (stored.mangas, stored.chapters, stored.dates, stored.pages) == (5, 12, 12, 36)
    # The page's own script fetched the list (the old endpoint, then the manga's ajax URL), and the
    # snapshot waited for it: the adapter never had to send the request itself.
    ajax = [r for r in madara_site.server.requests if r.method == "POST"]
    assert len(ajax) == 10
    assert all("Chrome" in r.headers.get("user-agent", "") for r in ajax)


def test_mangathemesia_preset_through_chromium_reads_the_script_built_reader(mangathemesia_site):
    row = themesia_source(mangathemesia_site, requires_browser=True)
    crawl(row.id)
    stored = check_full_crawl(row, mangathemesia_site.catalog, themesia_key, relative_dates=False)
    assert (stored.mangas, stored.chapters, stored.dates, stored.pages) == (5, 12, 12, 36)
