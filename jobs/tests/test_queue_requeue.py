"""Dead-letter requeue: four scopes, one pending job per dedup key, never a constraint violation."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from analysis.payloads import AnalyzePage
from catalog.models import Chapter, Manga, Page, Source
from crawler.payloads import SyncChapterContent, SyncChapterList, SyncManga
from jobs import queue, requeue, retry
from jobs.models import Job, JobState

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


@pytest.fixture
def library():
    """Two mangas; the first has a chapter with one page."""
    source = Source.objects.create(id="demo", name="Demo", base_url="http://127.0.0.1:1/")
    manga = Manga.objects.create(title="Alpha")
    other = Manga.objects.create(title="Beta")
    chapter = Chapter.objects.create(manga=manga, source=source, source_chapter_key="a-1", number=1)
    other_chapter = Chapter.objects.create(manga=other, source=source, source_chapter_key="b-1", number=1)
    page = Page.objects.create(chapter=chapter, index=0, image="pages/a.png", content_type="image/png", sha256="0")
    return {"manga": manga, "other": other, "chapter": chapter, "other_chapter": other_chapter, "page": page}


def _dead(payload, *, minutes_ago: int = 0) -> uuid.UUID:
    """A job that exhausted its attempts `minutes_ago`."""
    job_id = queue.enqueue(payload).id
    assert job_id is not None
    Job.objects.filter(id=job_id).update(
        state=JobState.DEAD,
        attempts=5,
        last_error="gave up",
        updated_at=timezone.now() - timedelta(minutes=minutes_ago),
    )
    return job_id


def _content(chapter: Chapter) -> SyncChapterContent:
    return SyncChapterContent(source_id="demo", chapter_id=chapter.id, source_chapter_key=chapter.source_chapter_key)


def _states() -> dict[uuid.UUID, str]:
    return dict(Job.objects.values_list("id", "state"))


def test_requeue_job_scope_revives_one_dead_job_with_fresh_attempts(library):
    target = _dead(AnalyzePage(page_id=library["page"].id))
    untouched = _dead(AnalyzePage(page_id=uuid.uuid4()))

    assert requeue.requeue_dead("job", target) == 1

    row = Job.objects.get(id=target)
    assert row.state == JobState.PENDING
    assert row.attempts == 0
    assert row.scheduled_at <= timezone.now()
    assert Job.objects.get(id=untouched).state == JobState.DEAD
    (lease,) = queue.lease(None, 10, timedelta(minutes=1))
    assert lease.id == target


def test_requeue_chapter_scope_with_several_dead_rows_yields_exactly_one_pending_job(library):
    chapter = library["chapter"]
    older = _dead(_content(chapter), minutes_ago=30)
    newer = _dead(_content(chapter), minutes_ago=5)
    page_job = _dead(AnalyzePage(page_id=library["page"].id))
    elsewhere = _dead(_content(library["other_chapter"]))

    assert requeue.requeue_dead("chapter", chapter.id) == 2

    states = _states()
    assert states[newer] == JobState.PENDING  # the newest dead row is the one revived
    assert states[older] == JobState.FAILED  # superseded, off the dead list
    assert states[page_job] == JobState.PENDING
    assert states[elsewhere] == JobState.DEAD
    assert Job.objects.filter(dedup_key=_content(chapter).dedup_key(), state=JobState.PENDING).count() == 1


def test_requeue_manga_scope_covers_the_manga_its_chapters_and_pages(library):
    manga = library["manga"]
    list_job = _dead(SyncChapterList(source_id="demo", manga_id=manga.id, source_manga_key="alpha"))
    chapter_job = _dead(_content(library["chapter"]))
    page_job = _dead(AnalyzePage(page_id=library["page"].id))
    other_job = _dead(_content(library["other_chapter"]))

    assert requeue.requeue_dead("manga", manga.id) == 3

    states = _states()
    assert {states[list_job], states[chapter_job], states[page_job]} == {JobState.PENDING}
    assert states[other_job] == JobState.DEAD


def test_requeue_all_without_confirm_raises_and_changes_nothing(library):
    dead = _dead(SyncManga(source_id="demo", source_manga_key="gone", url="", title=""))
    with pytest.raises(requeue.ConfirmationRequired, match="confirm"):
        requeue.requeue_dead("all")
    assert Job.objects.get(id=dead).state == JobState.DEAD


def test_requeue_all_with_confirm_revives_one_job_per_key(library):
    keys = [_content(library["chapter"]), _content(library["other_chapter"]), MetadataPassless()]
    for payload in keys:
        _dead(payload, minutes_ago=20)
        _dead(payload, minutes_ago=10)

    assert requeue.requeue_dead("all", confirm=True) == 3

    assert Job.objects.filter(state=JobState.PENDING).count() == 3
    assert Job.objects.filter(state=JobState.DEAD).count() == 0


def MetadataPassless() -> SyncManga:  # noqa: N802 - a payload constructor, read like the classes
    return SyncManga(source_id="demo", source_manga_key="no-row-yet", url="", title="Gamma")


def test_requeue_skips_a_key_that_is_already_in_flight(library):
    payload = AnalyzePage(page_id=library["page"].id)
    dead = _dead(payload)
    in_flight = queue.enqueue(payload).id

    assert requeue.requeue_dead("job", dead) == 0

    assert Job.objects.get(id=dead).state == JobState.DEAD
    assert Job.objects.get(id=in_flight).state == JobState.PENDING
    assert Job.objects.filter(dedup_key=payload.dedup_key(), state__in=["pending", "running"]).count() == 1


def test_requeue_bumps_the_generation_so_an_old_lease_stays_dead(library):
    job_id = queue.enqueue(AnalyzePage(page_id=library["page"].id), max_attempts=1).id
    (lease,) = queue.lease(None, 1, timedelta(minutes=1))
    assert retry.ack_failed(lease, "gave up")

    assert requeue.requeue_dead("job", job_id) == 1

    (fresh,) = queue.lease(None, 1, timedelta(minutes=1))
    assert fresh.lease_generation > lease.lease_generation + 1
    assert queue.ack_done(lease) is False
    assert queue.ack_done(fresh) is True


def test_requeue_rejects_bad_scopes_and_missing_targets():
    with pytest.raises(ValueError, match="everything"):
        requeue.requeue_dead("everything", confirm=True)
    with pytest.raises(ValueError, match="needs a target id"):
        requeue.requeue_dead("chapter")


def test_requeue_with_nothing_dead_is_zero(library):
    assert requeue.requeue_dead("manga", library["manga"].id) == 0


def test_requeue_manga_scope_finds_its_jobs_through_the_jobs_own_columns(library):
    """The manga scope names jobs by their manga, chapter or page column (each with its index), never by an
    OR across the joined chapter and page tables, which makes PostgreSQL scan every chapter of the library."""
    sql = str(requeue.dead_jobs_in_scope("manga", library["manga"].id).query)
    assert "UNION" in sql
    assert " OR " not in sql
