"""The two-site journey's failover: a chapter the preferred source stops serving is downloaded from the next one.

Called from the series journey (mangalord/tests/test_series_journey.py) once
the first drain downloaded every chapter key once. Alpha's copy of Frieren's
first chapter loses its pages (as the verify pass finds lost files) and alpha
now refuses that chapter's images with a 404; the operator queues it again
through the console's queueing path, and the real crawl worker fails it for
good and downloads beta's copy instead, which the audit log, the operator API
and the dashboard all show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client

from catalog.models import Chapter, MangaSource, Page
from console.control.actions import enqueue_missing_content
from crawler.models import AuditEvent
from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.server import Request, Response, not_found


def refuse_images_of(site: MadaraSite, manga_slug: str, chapter_number: int) -> None:
    """From now on `site` answers 404 to the page images of one chapter (everything else as before)."""
    manga = next(m for m in site.catalog if m.slug == manga_slug)
    chapter = next(c for c in manga.chapters if c.number == chapter_number)
    refused = f"/manga_{manga.post_id}/{chapter.slug}/"
    route: Callable[[Request], Response] = site.server._route

    def refusing(request: Request) -> Response:
        return not_found() if refused in request.path else route(request)

    site.server._route = refusing


def a_refused_chapter_fails_over_to_the_next_source(alpha: MadaraSite, drain: Callable[[], Any]) -> None:
    frieren = MangaSource.objects.get(source_id="alpha", manga__title="Sōsō no Frieren").manga
    lost = Chapter.objects.get(manga=frieren, number=1)
    twin = Chapter.objects.get(manga__series_id=frieren.series_id, source_id="beta", number=1)
    assert (lost.sync_state, twin.sync_state) == ("done", "new"), "downloaded once, from alpha"

    refuse_images_of(alpha, "frieren", 1)
    Page.objects.filter(chapter=lost).delete()
    Chapter.objects.filter(pk=lost.pk).update(sync_state=Chapter.SyncState.NEW, page_count=0)
    queued = enqueue_missing_content(actor=None, chapters=Chapter.objects.filter(pk=lost.pk), scope="chapter")
    assert queued == 1, "alpha, the preferred source, is tried first"
    drain()

    lost.refresh_from_db()
    twin.refresh_from_db()
    assert (lost.sync_state, twin.sync_state) == ("failed", "done")
    assert Page.objects.filter(chapter=twin).exists() and not Page.objects.filter(chapter=lost).exists()
    event = AuditEvent.objects.get(action="series_failover")
    assert (event.detail["from"], event.detail["to"], event.detail["chapter"]) == ("alpha", "beta", str(twin.pk))
    assert event.target_id == str(lost.pk)

    ops = get_user_model().objects.create_user("ops", "ops@example.com", "ops-password", is_staff=True)
    client = Client()
    client.force_login(ops)
    figures = client.get("/api/v1/admin/crawler/series-sources/").json()
    by_source = {row["source_id"]: row for row in figures["sources"]}
    assert (by_source["alpha"]["failovers_from"], by_source["beta"]["failovers_to"]) == (1, 1)
    assert by_source["beta"]["served"] >= 1, "beta serves Frieren's first chapter and the keys alpha lacks"
    (latest,) = figures["recent_failovers"]
    assert (latest["series"], latest["chapter"], latest["from"], latest["to"]) == (
        "Sōsō no Frieren",
        "c1",
        "alpha",
        "beta",
    )
    page = client.get("/admin/crawler/").content.decode()
    assert ">Sōsō no Frieren</a></td><td>c1</td><td>alpha</td><td>beta</td>" in page
