"""The challenged Madara stand-in crawled from its URL alone: `add_source`, `metadata_pass`, `crawl_worker --drain`.

`add_source` starts a browser, passes the challenge while probing the site and
hands the pass to the new source; every later request (pages over httpx,
images over libcurl, in the metadata pass and the crawl worker) carries the
cookie and the browser's User-Agent, so the whole crawl costs one pass.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from catalog.models import Source
from crawler.models import SourceClearance
from testsupport.challenge_site import ChallengedMadaraSite
from testsupport.theme_sites.expect import check_full_crawl, drain_crawl_worker, madara_key

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PACE = ["--set", "rate_limit=200", "--set", "burst=50", "--set", "max_concurrency=8"]


def test_a_challenged_madara_site_is_added_by_url_and_crawled_whole_with_one_pass():
    site = ChallengedMadaraSite()
    try:
        out = StringIO()
        call_command("add_source", "Shielded", site.base_url + "/", *PACE, stdout=out)
        printed = out.getvalue()
        assert "runs the madara theme" in printed
        assert "Passed the site's JavaScript challenge (via the browser)" in printed
        assert "added source 'shielded'" in printed
        row = Source.objects.get(id="shielded")

        call_command("metadata_pass", "--source", row.id, stdout=StringIO())
        drain_crawl_worker()

        stored = check_full_crawl(row, site.catalog, madara_key, relative_dates=True)
        assert (stored.mangas, stored.covers, stored.chapters, stored.dates, stored.pages) == (5, 5, 12, 12, 36)
        clearance = SourceClearance.objects.get(source_id="shielded")
        assert (clearance.passes, clearance.via) == (1, "browser")
        # The probe's first plain request and the browser's load: the only two interstitials of the crawl.
        assert site.challenges_served == 2
        agents = set(site.cleared_agents())
        assert agents == {clearance.user_agent} and "HeadlessChrome" not in clearance.user_agent
        assert len(site.cleared_agents()) > 36  # pages, covers, details, ajax lists, readers: all through
    finally:
        site.stop()


def test_when_the_site_stops_taking_the_cookie_the_crawl_passes_again(settings):
    settings.CRAWLER_CHALLENGE_PASS_INTERVAL_SECS = 1
    site = ChallengedMadaraSite()
    try:
        call_command("add_source", "Shielded", site.base_url + "/", *PACE, stdout=StringIO())
        row = Source.objects.get(id="shielded")
        site.forget_clearances()  # as a shield does when it rotates its keys: every cookie is void
        call_command("metadata_pass", "--source", row.id, stdout=StringIO())
        drain_crawl_worker()
        check_full_crawl(row, site.catalog, madara_key, relative_dates=True)
        assert SourceClearance.objects.get(source_id="shielded").passes == 2
    finally:
        site.stop()
