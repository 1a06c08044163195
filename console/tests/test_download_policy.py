"""Per-source download policy: `all` downloads every chapter, `followed` only bookmarked mangas' chapters."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from catalog.bookmarks import create_bookmark
from catalog.models import Chapter, Manga, Source
from console.control.errors import ControlError
from console.control.source_changes import set_download_policy
from console.status.source_stats import chapter_downloads, download_state
from crawler import download_policy
from crawler.models import AuditEvent
from crawler.passes.chapters import sync_chapters
from crawler.passes.download_backfill import cursor_key, run_backfill
from jobs.models import Job
from jobs.queue import lease
from jobs.retry import release
from sources.base import SourceChapter

CONTENT = "sync_chapter_content"


@pytest.mark.parametrize(
    ("policy", "followed", "wanted"),
    [("all", False, True), ("all", True, True), ("followed", True, True), ("followed", False, False)],
)
def test_wants_pages_truth_table(policy, followed, wanted):
    assert download_policy.wants_pages(policy, followed) is wanted


@pytest.mark.parametrize(
    ("sync_state", "policy", "column"),
    [
        ("done", "followed", "downloaded"),
        ("failed", "all", "failed"),
        ("new", "all", "waiting"),
        ("new", "followed", "not_wanted"),
        ("queued", "followed", "waiting"),
        ("downloading", "all", "waiting"),
    ],
)
def test_download_state_columns(sync_state, policy, column):
    assert download_state(sync_state, policy) == column


@pytest.mark.django_db
def test_a_bad_policy_is_refused_naming_the_source_and_key():
    source = Source(
        id="shelf", name="Shelf", kind="demo", base_url="http://127.0.0.1:9/", settings={"download": "some"}
    )
    with pytest.raises(ValidationError, match="source 'shelf': settings key 'download' must be 'all' or 'followed'"):
        source.full_clean()
    source.settings = {"download": "followed"}
    source.full_clean()


@pytest.fixture
def shelf(db):
    return Source.objects.create(
        id="shelf", name="Shelf", kind="demo", base_url="http://127.0.0.1:9/", settings={"download": "followed"}
    )


def chapters(manga, *numbers):
    return [SourceChapter(key=f"{manga.title}-{n}", number=Decimal(n), title="") for n in numbers]


def synced(source, title, *numbers):
    manga = Manga.objects.create(title=title)
    sync_chapters(manga, source, chapters(manga, *numbers))
    return manga


def content_jobs():
    return set(Job.objects.filter(kind=CONTENT, state="pending").values_list("chapter__manga__title", flat=True))


@pytest.mark.django_db
def test_followed_source_syncs_every_chapter_list_but_queues_only_bookmarked_mangas(shelf, alice):
    read = Manga.objects.create(title="Read")
    create_bookmark(user=alice, manga=read)
    sync_chapters(read, shelf, chapters(read, "2", "1"))
    synced(shelf, "Unread", "1", "2")

    assert Chapter.objects.filter(source=shelf).count() == 4
    assert content_jobs() == {"Read"}
    assert chapter_downloads()["shelf"] == {"downloaded": 0, "waiting": 2, "not_wanted": 2, "failed": 0}


@pytest.mark.django_db
def test_bookmark_added_later_queues_that_mangas_chapters_and_sync_then_queues_its_new_ones(shelf, alice):
    later = synced(shelf, "Later", "1")
    assert content_jobs() == set()

    create_bookmark(user=alice, manga=later)
    assert content_jobs() == {"Later"}
    sync_chapters(later, shelf, chapters(later, "2", "1"))
    assert Job.objects.filter(kind=CONTENT, chapter__manga=later).count() == 2


@pytest.mark.django_db
def test_switch_to_all_queues_the_rest_in_chapter_order_and_back_withdraws_unfollowed(shelf, alice, operator):
    kept = synced(shelf, "Kept", "1")
    create_bookmark(user=alice, manga=kept)
    synced(shelf, "Other", "3", "1", "2")

    switch = set_download_policy(actor=operator, source_id="shelf", policy="all")
    assert (switch.before, switch.after) == ("followed", "all")
    assert content_jobs() == {"Kept"}  # the request queued one job, not the chapters
    job = Job.objects.get(kind="enqueue_downloads", state="pending")
    assert str(job.id) == switch.enqueue_job == AuditEvent.objects.get(action="change_source").detail["enqueue_job"]
    assert run_backfill("shelf") == 3
    leased = lease([CONTENT], 10, timedelta(minutes=1))
    order = [(c.manga.title, c.number) for c in (Chapter.objects.get(id=lz.payload.chapter_id) for lz in leased)]
    # Kept's chapter was queued by its bookmark; the switch queued Other's, lowest number first.
    assert order == [("Kept", 1), ("Other", 1), ("Other", 2), ("Other", 3)]
    for lz in leased:  # back to pending for the withdraw below
        release(lz)

    switch = set_download_policy(actor=operator, source_id="shelf", policy="followed")
    assert (switch.withdrawn, content_jobs()) == (3, {"Kept"})
    assert set(Chapter.objects.filter(manga__title="Other").values_list("sync_state", flat=True)) == {"new"}
    assert AuditEvent.objects.filter(action="change_source", target_id="shelf").count() == 2


@pytest.mark.django_db
def test_switching_refuses_an_unknown_source_or_policy_and_changes_nothing(shelf, capsys):
    with pytest.raises(ControlError, match="source 'nope' does not exist"):
        set_download_policy(actor=None, source_id="nope", policy="all")
    with pytest.raises(CommandError, match="invalid choice: 'some'"):
        call_command("download_policy", "shelf", "some")
    shelf.refresh_from_db()
    assert shelf.settings == {"download": "followed"}

    call_command("download_policy", "shelf", "all")
    shelf.refresh_from_db()
    assert shelf.settings == {"download": "all"}
    call_command("download_policy", "shelf")
    assert "shelf: download all; chapters: downloaded 0, waiting 0, not_wanted 0" in capsys.readouterr().out


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    from testsupport.worker_processes import worker_pool

    yield from worker_pool(child_env, manage_cmd, tmp_path)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_followed_source_crawls_metadata_for_all_and_pages_only_for_bookmarked_mangas(
    demo_site_factory, workers, alice
):
    """Real crawl workers: every manga's metadata, cover and chapters; pages for bookmarked ones, also later ones."""
    from catalog.models import Page
    from crawler.payloads import MetadataPass
    from jobs.queue import enqueue

    site = demo_site_factory(mangas=3, chapters=(2, 2), pages=(2, 2))
    Source.objects.create(
        id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url, settings={"download": "followed"}
    )
    enqueue(MetadataPass(source_id="demo"))
    assert workers.start("--drain").wait(120) == 0

    mangas = list(Manga.objects.order_by("title"))
    assert len(mangas) == 3
    assert all(m.cover_state == Manga.CoverState.STORED for m in mangas)
    assert Chapter.objects.count() == 6
    assert not Page.objects.exists()
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {"new"}
    assert not Job.objects.filter(state__in=["dead", "failed"]).exists()

    first, second, third = mangas
    create_bookmark(user=alice, manga=first)
    assert workers.start("--drain").wait(120) == 0
    assert set(Page.objects.values_list("chapter__manga__title", flat=True)) == {first.title}
    assert Page.objects.count() == 4  # 2 chapters x 2 pages

    create_bookmark(user=alice, manga=second)  # followed later: its chapters download on the next run
    assert workers.start("--drain").wait(120) == 0
    assert set(Page.objects.values_list("chapter__manga__title", flat=True)) == {first.title, second.title}
    assert set(Chapter.objects.filter(manga=third).values_list("sync_state", flat=True)) == {"new"}
    assert chapter_downloads()["demo"] == {"downloaded": 4, "waiting": 0, "not_wanted": 2, "failed": 0}

    # Switched to `all`: the command queues one job; a worker runs it, then downloads what it queued.
    call_command("download_policy", "demo", "all")
    assert not Job.objects.filter(kind=CONTENT, state="pending").exists()
    assert workers.start("--drain").wait(120) == 0
    assert Page.objects.count() == 12
    assert AuditEvent.objects.get(action="enqueue_downloads", target_id="demo").detail == {"enqueued": 2}
    assert not Job.objects.filter(state__in=["dead", "failed"]).exists()


@pytest.mark.django_db
def test_the_sources_page_settings_switch_the_policy_like_the_command(admin_user):
    from django.test import Client

    demo = Source.objects.create(
        id="shelf", name="Shelf", kind="demo", base_url="http://127.0.0.1:9/", settings={"download": "followed"}
    )
    synced(demo, "Unread", "1", "2")
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(admin_user)  # a superuser operates: no Operators group to make (or flush)
    response = client.post("/admin/crawler/sources/shelf/settings/", {"settings": '{"download": "all"}'})
    assert response.status_code == 302
    audit = AuditEvent.objects.get(action="change_source")
    job = Job.objects.get(kind="enqueue_downloads", state="pending")
    assert (audit.detail["enqueue_job"], audit.detail["withdrawn"]) == (str(job.id), 0)
    assert run_backfill("shelf", job.payload["switch"]) == 2
    assert content_jobs() == {"Unread"}  # the switch's job queued the chapters nobody had wanted


@pytest.mark.django_db
def test_the_enqueue_job_queues_in_batches_and_a_cancelled_one_resumes_after_what_it_queued(shelf, monkeypatch):
    import threading

    from crawler.passes import download_backfill
    from jobs.errors import JobCancelled

    synced(shelf, "Long", "5", "4", "3", "2", "1")
    Source.objects.filter(id="shelf").update(settings={"download": "all"})
    monkeypatch.setattr(download_backfill, "BATCH", 2)
    cancel, batches = threading.Event(), []

    def after_batch(queued):
        batches.append(queued)
        cancel.set()  # the worker shuts down after the first batch

    with pytest.raises(JobCancelled, match="cancelled after 2 chapter"):
        run_backfill("shelf", cancel=cancel, progress=after_batch)
    queued = Job.objects.filter(kind=CONTENT).order_by("created_at", "id")
    assert [job.chapter.number for job in queued] == [1, 2]
    assert download_backfill.state_store.get_state(cursor_key("shelf", "")) is not None

    assert run_backfill("shelf", progress=batches.append) == 3  # the retry starts after chapter 2
    assert batches == [2, 2, 3]
    leased = lease([CONTENT], 10, timedelta(minutes=1))
    assert [Chapter.objects.get(id=lz.payload.chapter_id).number for lz in leased] == [1, 2, 3, 4, 5]
    assert download_backfill.state_store.get_state(cursor_key("shelf", "")) is None


@pytest.mark.django_db
def test_the_enqueue_job_stops_once_the_source_is_switched_back_and_a_new_switch_has_its_own_job(shelf, operator):
    synced(shelf, "Other", "1", "2")
    first = set_download_policy(actor=operator, source_id="shelf", policy="all").enqueue_job
    set_download_policy(actor=operator, source_id="shelf", policy="followed")
    old = Job.objects.get(id=first)
    assert run_backfill("shelf", old.payload["switch"]) is None
    assert content_jobs() == set()
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {"new"}

    # Switched to `all` again while the first job still runs: a job of its own, whatever the first one does.
    second = set_download_policy(actor=operator, source_id="shelf", policy="all").enqueue_job
    assert second != first
    assert Job.objects.filter(kind="enqueue_downloads", state="pending").count() == 2
    assert run_backfill("shelf", old.payload["switch"]) is None  # superseded: queues nothing
    assert content_jobs() == set()
    assert run_backfill("shelf", Job.objects.get(id=second).payload["switch"]) == 2
    assert content_jobs() == {"Other"}
