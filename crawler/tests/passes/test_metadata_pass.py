"""The metadata pass against the live demo site on 127.0.0.1 and PostgreSQL.

Early stop, the recovery flag, list drift healed by reconcile, per-manga
failures and the consecutive-failure abort.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.files.storage import default_storage

from catalog.models import Chapter, Manga, MangaSource
from catalog.series_matching import match_keys
from crawler import state_store
from crawler.factory import get_source
from crawler.passes import metadata_pass
from crawler.passes.metadata_pass import run_metadata_pass
from crawler.passes.reconcile import run_reconcile
from jobs.models import Job
from jobs.worker.status.handle import StatusHandle
from sources.errors import SessionExpired, SourceUnavailable

pytestmark = pytest.mark.django_db


def run_pass(source_row, **kwargs):
    return run_metadata_pass(source_row, status=StatusHandle(), **kwargs)


def content_job_numbers(manga):
    """Chapter numbers of the manga's content jobs in the order the queue hands them out."""
    jobs = Job.objects.filter(kind="sync_chapter_content", chapter__manga=manga).order_by("scheduled_at", "created_at")
    numbers = dict(Chapter.objects.filter(manga=manga).values_list("id", "number"))
    return [numbers[j.chapter_id] for j in jobs]


@pytest.mark.sqlite_ok
def test_full_pass_stores_every_manga_cover_and_chapter_and_enqueues_content_in_number_order(demo_site, demo_source):
    status = StatusHandle()
    stats = run_metadata_pass(demo_source, status=status)

    site_mangas = demo_site.catalog
    assert (stats.discovered, stats.upserted, stats.covers_fetched, stats.mangas_failed) == (12, 12, 12, 0)
    assert stats.walked_to_completion and not stats.stopped_early and not stats.aborted
    assert set(MangaSource.objects.values_list("source_manga_key", flat=True)) == {m.key for m in site_mangas}
    for site_manga in site_mangas:
        manga = MangaSource.objects.get(source_manga_key=site_manga.key).manga
        assert manga.title == site_manga.title
        assert manga.cover_state == "stored" and default_storage.exists(manga.cover.name)
        assert manga.cover.name.startswith(f"covers/{manga.id}/")
        # Series matching finds it by its title and its cover's hash bands (catalog.series_matching).
        assert len(manga.cover_hash) == 16
        assert set(manga.match_keys.values_list("key", flat=True)) == match_keys(
            manga.title, manga.alt_titles, manga.cover_hash
        )
        stored = dict(Chapter.objects.filter(manga=manga).values_list("source_chapter_key", "number"))
        assert stored == {c.key: c.number for c in site_manga.chapters}
        numbers = content_job_numbers(manga)
        assert numbers == sorted(c.number for c in site_manga.chapters)
    assert Decimal("2.5") in content_job_numbers(MangaSource.objects.get(source_manga_key="manga-0004").manga)
    assert Job.objects.filter(kind="sync_chapter_content").count() == sum(len(m.chapters) for m in site_mangas)
    assert state_store.last_run_clean("demo") is True
    summary = state_store.last_pass("demo")
    assert summary["discovered"] == 12 and summary["covers_fetched"] == 12 and summary["at"]
    snapshot = status.snapshot()
    assert snapshot.last_pass["discovered"] == 12
    assert snapshot.phase["state"] == "idle"


def test_pass_publishes_its_phases_walking_then_fetching_each_manga_then_idle(demo_site, demo_source):
    status = StatusHandle()
    phases = []
    status.add_listener(lambda: phases.append(status.snapshot().phase))

    run_metadata_pass(demo_source, status=status)

    states = [p["state"] for p in phases]
    assert states[0] == "walking_list" and states[-1] == "idle"
    assert states.count("walking_list") == 2, "one per list page"
    fetching = [(p["index"], p["title"]) for p in phases if p["state"] == "fetching_metadata"]
    assert [i for i, _ in dict.fromkeys(fetching)] == list(range(1, 13))
    assert [t for _, t in dict.fromkeys(fetching)] == [m.title for m in demo_site.catalog]


@pytest.mark.sqlite_ok
def test_second_pass_stops_at_the_first_unchanged_manga(demo_site, demo_source):
    run_pass(demo_source)

    stats = run_pass(demo_source)

    assert stats.discovered == 1
    assert stats.stopped_early and not stats.walked_to_completion
    assert state_store.last_run_clean("demo") is True


def test_pass_after_a_new_chapter_syncs_that_manga_then_stops_at_the_next_unchanged(demo_site, demo_source):
    run_pass(demo_source)
    bumped = demo_site.catalog[5].key
    new_chapter = demo_site.add_chapter(bumped)  # moves the manga to the front of the list
    Chapter.objects.update(sync_state="done")
    Job.objects.all().delete()

    stats = run_pass(demo_source)

    assert stats.discovered == 2 and stats.stopped_early
    assert stats.upserted == 0, "only the chapter list changed"
    chapter = Chapter.objects.get(source_chapter_key=new_chapter)
    assert chapter.manga.sources.get().source_manga_key == bumped
    assert list(Job.objects.values_list("chapter_id", flat=True)) == [chapter.id]


def test_pass_after_a_metadata_change_updates_that_manga_then_stops(demo_site, demo_source):
    run_pass(demo_source)
    key = demo_site.catalog[3].key
    demo_site.update_manga(key, title="A Brand New Title", tags=["comedy"])

    stats = run_pass(demo_source)

    assert (stats.discovered, stats.upserted) == (2, 1)
    manga = MangaSource.objects.get(source_manga_key=key).manga
    assert manga.title == "A Brand New Title"
    assert list(manga.tags.values_list("name", flat=True)) == ["comedy"]


def test_a_pass_that_did_not_exit_cleanly_makes_the_next_pass_walk_everything(demo_site, demo_source):
    run_pass(demo_source)
    # A login wall mid-run ends the pass with an exception: like a crash, no clean exit is recorded.
    demo_site.faults.login_wall = True
    with pytest.raises(SessionExpired):
        run_pass(demo_source)
    assert state_store.last_run_clean("demo") is False
    demo_site.faults.login_wall = False

    recovery = run_pass(demo_source)
    assert recovery.discovered == 12 and recovery.walked_to_completion and not recovery.stopped_early
    assert state_store.last_run_clean("demo") is True

    assert run_pass(demo_source).discovered == 1


def test_flag_left_false_by_a_killed_pass_makes_the_next_pass_walk_everything(demo_site, demo_source):
    run_pass(demo_source)
    # What a kill -9 mid-walk leaves behind: the flag the pass set false at start.
    state_store.set_last_run_clean("demo", False)

    stats = run_pass(demo_source)

    assert stats.discovered == 12 and stats.walked_to_completion


def test_a_limited_pass_is_never_a_clean_exit(demo_site, demo_source):
    stats = run_pass(demo_source, limit=4)

    assert stats.discovered == 4 and not stats.walked_to_completion
    assert state_store.last_run_clean("demo") is False
    assert run_pass(demo_source).discovered == 12


@pytest.mark.sqlite_ok
def test_list_drift_leaves_a_manga_out_and_reconcile_enqueues_exactly_it(demo_site, demo_source):
    demo_site.faults.list_drift = True
    stats = run_pass(demo_source)
    demo_site.faults.list_drift = False

    (drifted,) = demo_site.drift_added
    assert stats.discovered == 12
    assert not MangaSource.objects.filter(source_manga_key=drifted).exists()

    source = get_source(demo_source)
    try:
        recon = run_reconcile(demo_source, source)
    finally:
        source.close()

    assert (recon.walked, recon.missing, recon.enqueued) == (13, 1, 1)
    (job,) = Job.objects.filter(kind="sync_manga")
    title = demo_site.manga(drifted).title
    assert (job.payload["source_manga_key"], job.payload["title"]) == (drifted, title)
    assert job.payload["url"].endswith(f"/manga/{drifted}")


def test_a_detail_page_404_fails_that_manga_only(demo_site, demo_source):
    missing = demo_site.catalog[2].key
    demo_site.faults.detail_404 = {missing}

    stats = run_pass(demo_source)

    assert (stats.discovered, stats.mangas_failed, stats.upserted) == (12, 1, 11)
    assert not stats.aborted and stats.walked_to_completion
    assert MangaSource.objects.count() == 11
    assert not MangaSource.objects.filter(source_manga_key=missing).exists()


def test_consecutive_detail_failures_abort_the_pass(demo_site, demo_source, settings):
    settings.CRAWLER_METADATA_MAX_CONSECUTIVE_FAILURES = 3
    demo_site.faults.detail_404 = {m.key for m in demo_site.catalog}

    stats = run_pass(demo_source)

    assert stats.aborted and (stats.discovered, stats.mangas_failed) == (3, 3)
    assert state_store.last_run_clean("demo") is False
    assert state_store.last_pass("demo")["aborted"] is True


def test_an_outage_during_the_walk_aborts_after_n_consecutive_failures(demo_site, demo_source, settings, monkeypatch):
    settings.CRAWLER_METADATA_MAX_CONSECUTIVE_FAILURES = 4

    class OutageAfterFirstListPage:
        """The real demo adapter; the site goes down right after it served list page 1."""

        def __init__(self, inner):
            self.inner = inner

        def list_page(self, n):
            page = self.inner.list_page(n)
            demo_site.faults.outage = True
            return page

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(metadata_pass, "get_source", lambda row, **_: OutageAfterFirstListPage(get_source(row)))

    stats = run_pass(demo_source)

    assert stats.aborted and (stats.discovered, stats.mangas_failed) == (4, 4)
    assert Manga.objects.count() == 0
    assert state_store.last_run_clean("demo") is False


def test_an_outage_on_the_list_page_fails_the_pass_without_a_clean_exit(demo_site, demo_source):
    demo_site.faults.outage = True
    with pytest.raises(SourceUnavailable):
        run_pass(demo_source)
    assert state_store.last_run_clean("demo") is False


def test_a_broken_cover_does_not_fail_its_manga_and_the_backfill_retries_it(demo_site, demo_source):
    demo_site.faults.broken_image = True
    first = run_pass(demo_source)
    assert (first.discovered, first.mangas_failed, first.covers_fetched) == (12, 0, 0)
    assert set(Manga.objects.values_list("cover_state", flat=True)) == {"failed"}
    assert Chapter.objects.count() == sum(len(m.chapters) for m in demo_site.catalog)

    demo_site.faults.broken_image = False
    status = StatusHandle()
    phases = []
    status.add_listener(lambda: phases.append(status.snapshot().phase))
    second = run_metadata_pass(demo_source, status=status)

    # The walk stops at the first unchanged manga (whose cover it retries); the backfill fetches the rest.
    assert second.discovered == 1 and second.covers_fetched == 12
    assert set(Manga.objects.values_list("cover_state", flat=True)) == {"stored"}
    backfill = [(p["index"], p["total"]) for p in phases if p["state"] == "cover_backfill"]
    assert sorted(set(backfill)) == [(i, 11) for i in range(1, 12)]
    assert phases[-1]["state"] == "idle"


def test_a_cover_refetch_leaves_only_the_current_cover_in_its_directory(demo_site, demo_source):
    run_pass(demo_source)
    manga = MangaSource.objects.get(source_manga_key=demo_site.catalog[0].key).manga
    old_cover = manga.cover.name
    # What a process killed mid-fetch can leave: a temp file and a stored file never recorded.
    directory = default_storage.path(f"covers/{manga.id}")
    for stray in (".incoming-x.part", "0123abcd.png"):
        with open(f"{directory}/{stray}", "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
    Manga.objects.filter(id=manga.id).update(cover_state="failed")

    run_pass(demo_source)

    manga.refresh_from_db()
    assert manga.cover_state == "stored"
    assert default_storage.listdir(f"covers/{manga.id}")[1] == [manga.cover.name.rsplit("/", 1)[1]]
    assert not default_storage.exists(old_cover)


def test_a_list_that_stops_advancing_ends_the_pass_without_a_clean_exit(demo_site, demo_source, monkeypatch):
    class PageOneForever:
        """The real demo adapter behind a list URL that ignores its page number."""

        def __init__(self, inner):
            self.inner = inner

        def list_page(self, n):
            refs, _ = self.inner.list_page(1)
            return refs, True

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(metadata_pass, "get_source", lambda row, **_: PageOneForever(get_source(row)))

    stats = run_pass(demo_source)

    assert stats.discovered == 10 and not stats.walked_to_completion
    assert state_store.last_run_clean("demo") is False
