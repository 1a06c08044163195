"""JavaScript challenges passed for real: the stand-in's interstitial in Chromium, then plain httpx and libcurl.

The stand-in (`testsupport.challenge_site`) binds its clearance cookie to the
User-Agent of the browser that ran its script, so a plain request gets through
only when it presents both, as the worker's transports must.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from catalog.models import Source
from crawler.models import SourceClearance
from crawler.sources.browser import BrowserManager
from crawler.sources.factory import get_source
from testsupport.challenge_site import COOKIE, ChallengedMadaraSite, SolverStandIn
from testsupport.theme_sites.expect import LOCAL_PACE

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def challenged_site() -> Iterator[ChallengedMadaraSite]:
    site = ChallengedMadaraSite()
    yield site
    site.stop()


@pytest.fixture
def browser_manager(settings) -> Iterator[BrowserManager]:
    manager = BrowserManager(executable_path=settings.CHROMIUM_PATH or "/usr/bin/chromium")
    yield manager
    manager.close()


@pytest.fixture
def solver() -> Iterator[SolverStandIn]:
    stand_in = SolverStandIn()
    yield stand_in
    stand_in.stop()


def challenged_source(site: ChallengedMadaraSite, **settings) -> Source:
    return Source.objects.create(
        id="shielded", name="Shielded", base_url=site.base_url, settings={"preset": "madara", **LOCAL_PACE, **settings}
    )


def read_one_chapter(source) -> tuple[list, list[bytes]]:
    refs, _ = source.list_page(1)
    detail = source.manga_detail(refs[0])
    pages = source.chapter_pages(detail.chapters[0])
    images = []
    for url in pages:
        stream = source.open_image(url)
        try:
            images.append(b"".join(stream.iter_bytes()))
        finally:
            stream.close()
    return refs, images


@pytest.mark.browser
def test_chromium_passes_the_challenge_then_plain_pages_and_images_carry_its_cookie_and_user_agent(
    challenged_site, browser_manager
):
    row = challenged_source(challenged_site)
    source = get_source(row, browser=browser_manager)
    try:
        refs, images = read_one_chapter(source)
    finally:
        source.close()
    first = challenged_site.catalog[0]
    assert [r.key for r in refs][:1] == [first.slug]
    assert images == list(first.chapters[-1].pages) or images == list(first.chapters[0].pages)
    stored = SourceClearance.objects.get(source_id="shielded")
    assert (stored.passes, stored.via) == (1, "browser")
    assert [c["name"] for c in stored.cookies] == [COOKIE]
    assert stored.expires_at is not None
    agent = stored.user_agent
    assert "Chrome/" in agent and "HeadlessChrome" not in agent
    # Every request that got through the shield presented the browser's User-Agent, the plain ones included.
    assert set(challenged_site.cleared_agents()) == {agent}
    # Two interstitials: the first plain request's, and the one the browser ran. None after.
    assert challenged_site.challenges_served == 2
    # The next job (another adapter, as on another worker) starts with the stored pass: no challenge, no pass.
    again = get_source(row)  # no browser at all: it could not pass, and does not need to
    try:
        read_one_chapter(again)
    finally:
        again.close()
    assert challenged_site.challenges_served == 2
    assert SourceClearance.objects.get(source_id="shielded").passes == 1
