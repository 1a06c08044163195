"""Data migrations: crawler 0002 demotes duplicate in-flight jobs before adding the dedup constraint; catalog 0008
renames chapters stored under the old default key once; crawler 0009 gives old sync_manga payloads their url and
title."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from analysis.payloads import AnalyzePage
from jobs import queue, requeue

BEFORE = [("crawler", "0001_initial")]
AFTER = [("crawler", "0002_inflight_dedup")]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_inflight_dedup_migration_demotes_all_but_the_oldest_duplicate(migrator):
    apps = migrator(BEFORE)
    Job = apps.get_model("crawler", "Job")
    page_id = uuid.uuid4()
    dirty_key = f"analyze_page:{page_id}"
    start = timezone.now() - timedelta(hours=3)

    def row(key, state, minutes, **extra):
        at = start + timedelta(minutes=minutes)
        return Job.objects.create(
            kind="analyze_page",
            payload={"kind": "analyze_page", "page_id": str(page_id)},
            state=state,
            dedup_key=key,
            scheduled_at=at,
            created_at=at,
            updated_at=at,
            **extra,
        ).id

    oldest = row(dirty_key, "pending", 0)
    running_dup = row(dirty_key, "running", 10, leased_until=start + timedelta(hours=5), attempts=1)
    pending_dup = row(dirty_key, "pending", 20)
    finished = row(dirty_key, "done", -30)
    clean = row("analyze_page:clean", "pending", 5)

    apps = migrator(AFTER)

    Job = apps.get_model("crawler", "Job")
    rows = {job.id: job for job in Job.objects.all()}
    assert rows[oldest].state == "pending"
    assert rows[clean].state == "pending"
    assert rows[finished].state == "done"
    for demoted in (running_dup, pending_dup):
        assert rows[demoted].state == "dead"
        assert rows[demoted].leased_until is None
        assert "demoted by migration 0002_inflight_dedup" in rows[demoted].last_error
        assert dirty_key in rows[demoted].last_error
        assert "requeue" in rows[demoted].last_error  # the marker says how to recover
    # The live queue writes today's schema: bring every app up to date first.
    migrator(MigrationExecutor(connection).loader.graph.leaf_nodes())
    # The constraint is live now: the key is taken by the surviving row.
    assert queue.enqueue(AnalyzePage(page_id=page_id)).skipped
    # And a demoted row is recoverable once the survivor has finished.
    Job.objects.filter(id=oldest).update(state="done")
    assert requeue.requeue_dead("job", pending_dup) == 1


KEYS_BEFORE = [("catalog", "0007_keyset_paging_indexes")]
KEYS_AFTER = [("catalog", "0008_chapter_keys_are_whole_paths")]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_chapters_stored_under_the_last_segment_key_take_the_whole_path_key_once(migrator):
    apps = migrator(KEYS_BEFORE)
    Source = apps.get_model("catalog", "Source")
    Manga = apps.get_model("catalog", "Manga")
    Chapter = apps.get_model("catalog", "Chapter")
    plain = Source.objects.create(id="legacy", name="Legacy", kind="html", base_url="https://m.test")
    keyed = Source.objects.create(
        id="keyed", name="Keyed", kind="html", base_url="https://k.test", settings={"chapter_key_pattern": "/(c-\\d+)$"}
    )
    first, second = Manga.objects.create(title="A"), Manga.objects.create(title="B")

    def chapter(source, manga, key, url, number, state="new"):
        return Chapter.objects.create(
            manga=manga, source=source, source_chapter_key=key, url=url, number=number, sync_state=state
        ).id

    old = chapter(plain, first, "chapter-1", "https://m.test/manga/a/chapter-1", 1, "done")
    current = chapter(plain, first, "manga/a/chapter-2", "https://m.test/manga/a/chapter-2", 2)
    other_segment = chapter(plain, first, "c9", "https://m.test/manga/a/chapter-9", 9)
    no_url = chapter(plain, first, "chapter-5", "", 5)
    taken = chapter(plain, second, "manga/b/chapter-3", "", 3)
    colliding = chapter(plain, first, "chapter-3", "https://m.test/manga/b/chapter-3", 3)
    patterned = chapter(keyed, first, "chapter-1", "https://k.test/manga/a/chapter-1", 1)

    apps = migrator(KEYS_AFTER)

    Chapter = apps.get_model("catalog", "Chapter")
    keys = dict(Chapter.objects.values_list("id", "source_chapter_key"))
    assert keys[old] == "manga/a/chapter-1"
    assert Chapter.objects.get(id=old).sync_state == "done"  # the same row: its download is kept
    assert keys[current] == "manga/a/chapter-2"
    assert keys[other_segment] == "c9"  # not the last segment of its own URL
    assert keys[no_url] == "chapter-5"
    assert (keys[taken], keys[colliding]) == ("manga/b/chapter-3", "chapter-3")  # the new key is another row's
    assert keys[patterned] == "chapter-1"  # the source names its own keys

    # With today's schema, a sync listing the whole-path keys finds the renamed chapter: nothing downloads twice.
    migrator(MigrationExecutor(connection).loader.graph.leaf_nodes())
    from catalog.models import Chapter as LiveChapter
    from catalog.models import Manga as LiveManga
    from catalog.models import Source as LiveSource
    from crawler.passes.chapters import sync_chapters
    from sources.base import SourceChapter

    listed = [SourceChapter(key="manga/a/chapter-1", number=1), SourceChapter(key="manga/a/chapter-4", number=4)]
    result = sync_chapters(LiveManga.objects.get(id=first.id), LiveSource.objects.get(id="legacy"), listed)
    assert result.new == 1
    assert LiveChapter.objects.get(id=old).sync_state == "done"


# The catalog is stepped back too, before its series (a manga of the later catalog needs one, which this
# test's catalog state would not know of).
PAYLOADS_BEFORE = [("jobs", "0005_job_source_column"), ("catalog", "0009_chapter_kind_and_volume")]
PAYLOADS_AFTER = [("jobs", "0006_sync_manga_payloads_carry_url_and_title")]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_sync_manga_payloads_without_url_and_title_take_them_from_the_stored_link(migrator):
    apps = migrator(PAYLOADS_BEFORE)
    Source = apps.get_model("catalog", "Source")
    Manga = apps.get_model("catalog", "Manga")
    MangaSource = apps.get_model("catalog", "MangaSource")
    Job = apps.get_model("jobs", "Job")
    source = Source.objects.create(id="shelf", name="Shelf", kind="html", base_url="https://s.test")
    manga = Manga.objects.create(title="Stored Title")
    MangaSource.objects.create(manga=manga, source=source, source_manga_key="m1", url="https://s.test/manga/m1")
    now = timezone.now()

    def job(key, state, **fields):
        payload = {"kind": "sync_manga", "source_id": "shelf", "source_manga_key": key, **fields}
        return Job.objects.create(
            kind="sync_manga",
            payload=payload,
            state=state,
            dedup_key=f"sync_manga:shelf:{key}" if state in ("pending", "running") else None,
            source_id="shelf",
            scheduled_at=now,
            created_at=now,
            updated_at=now,
        ).id

    pending, dead = job("m1", "pending"), job("m1", "dead")
    unlinked = job("m2", "pending")
    current = job("m3", "pending", url="https://s.test/manga/m3", title="Listed")
    finished = job("m1", "done")

    apps = migrator(PAYLOADS_AFTER)

    payloads = dict(apps.get_model("jobs", "Job").objects.values_list("id", "payload"))
    for upgraded in (pending, dead):
        assert (payloads[upgraded]["url"], payloads[upgraded]["title"]) == ("https://s.test/manga/m1", "Stored Title")
    assert (payloads[unlinked]["url"], payloads[unlinked]["title"]) == ("", "")
    assert (payloads[current]["url"], payloads[current]["title"]) == ("https://s.test/manga/m3", "Listed")
    assert "url" not in payloads[finished]  # never leased again: left as it was
