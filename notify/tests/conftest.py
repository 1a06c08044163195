"""Shared notify fixtures: a demo series crawled by the real pipeline, its downloads run as a crawl worker would."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from catalog.models import Source
from crawler.passes.metadata_pass import run_metadata_pass
from crawler.workers.handlers import JobContext
from jobs import kinds, queue
from jobs.worker.status.handle import StatusHandle

# A crawled title with markup in it: it must reach the body as text, never as markup.
EVIL_TITLE = "Night <b>Raid</b> [x](https://evil.example)"


def crawl_content() -> int:
    """Run every queued chapter download in this process, as a crawl worker would; how many ran."""
    ran = 0
    while leases := queue.lease(["sync_chapter_content"], 10, timedelta(minutes=5)):
        for lease in leases:
            context = JobContext(lease=lease, status=StatusHandle(), cancel=threading.Event())
            kinds.registered()[lease.kind].handler(lease.payload, context)
            queue.ack_done(lease)
            ran += 1
    return ran


@pytest.fixture
def crawled(demo_site_factory):
    """One demo series with 3 chapters of 2 pages, listed by a first crawl (downloads queued, not run yet)."""
    site = demo_site_factory(mangas=1, chapters=(3, 3), pages=(2, 2))
    (key,) = [m.key for m in site.catalog]
    site.update_manga(key, title=EVIL_TITLE)
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    return site, key, source
