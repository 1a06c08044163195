"""The digest pass over database rows: who gets what, one digest per user and pass, each chapter in one pass."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import Bookmark, Chapter, Manga, Source
from jobs.models import Job
from notify.digests.passes import pass_due, run_digest_pass, run_scheduled_pass
from notify.health.alerts import check_health
from notify.health.probes import disk_conditions
from notify.models import Delivery, DigestPass, HealthCondition, NotificationTarget, ReadyChapter
from notify.receivers import record_ready_chapter

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

LONG_AGO = timezone.now() - timedelta(days=30)


def series(title: str, chapters: int) -> list[Chapter]:
    source, _ = Source.objects.get_or_create(id="s", defaults={"name": "S", "base_url": "https://s.example"})
    manga = Manga.objects.create(title=title)
    Manga.objects.filter(id=manga.id).update(created_at=LONG_AGO)
    return [
        Chapter.objects.create(manga=manga, source=source, source_chapter_key=f"{title}-{n}", number=Decimal(n))
        for n in range(1, chapters + 1)
    ]


def follow(user, chapter: Chapter) -> None:
    bookmark = Bookmark.objects.create(user=user, manga_id=chapter.manga_id)
    Bookmark.objects.filter(id=bookmark.id).update(created_at=LONG_AGO)


def ready(*chapters: Chapter) -> None:
    for chapter in chapters:
        record_ready_chapter(Chapter, chapter=chapter)


def test_each_user_gets_one_digest_per_pass_of_their_series_only(alice, django_user_model):
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "pw")
    carol = django_user_model.objects.create_user("carol", "carol@example.com", "pw")  # no URL: nothing queued
    a = series("Akira", 2)
    b = series("Berserk", 1)
    follow(alice, a[0])
    follow(alice, b[0])
    follow(bob, b[0])
    follow(carol, a[0])
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a2", scheme="json")
    NotificationTarget.objects.create(user=bob, url="json://127.0.0.1:9/b", scheme="json")
    NotificationTarget.objects.create(user=bob, url="json://127.0.0.1:9/bh", scheme="json", digests=False)
    ready(*a, *b)

    outcome = run_digest_pass()

    assert (outcome.chapters, outcome.digests) == (3, 3)
    by_path = {d.target.url.rsplit("/", 1)[1]: d for d in Delivery.objects.select_related("target")}
    assert set(by_path) == {"a", "a2", "b"}
    assert by_path["a"].body == by_path["a2"].body
    assert by_path["a"].title == "3 chapters ready to read"
    assert "**Akira**" in by_path["a"].body and "**Berserk**" in by_path["a"].body
    assert "Akira" not in by_path["b"].body and by_path["b"].title == "1 chapter ready to read"
    assert Job.objects.filter(kind="notify_send").count() == 3
    assert not ReadyChapter.objects.filter(digest_pass__isnull=True).exists()


def test_a_bookmark_on_a_series_lead_hears_of_the_chapters_another_source_downloaded(alice):
    from catalog import series as service

    lead, copy = series("Tide", 1), series("The Tide", 2)
    service.merge_series(lead[0].manga.series, [copy[0].manga.series], via="test")
    follow(alice, lead[0])  # the series' bookmark sits on its lead
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    ready(copy[1])  # chapter 2 came from the other source's copy

    assert (run_digest_pass().digests, Delivery.objects.get().title) == (1, "1 chapter ready to read")


def test_a_second_pass_sends_only_what_became_readable_since(alice):
    chapters = series("Akira", 2)
    follow(alice, chapters[0])
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    ready(chapters[0])
    run_digest_pass()
    ready(chapters[1])
    second = run_digest_pass()
    assert (second.chapters, second.digests) == (1, 1)
    latest = Delivery.objects.order_by("-created_at").first()
    assert (
        latest is not None
        and f"/read/{chapters[1].id}/" in latest.body
        and f"/read/{chapters[0].id}/" not in latest.body
    )
    assert run_digest_pass().pass_id is None  # nothing new: no pass row, nothing queued
    assert DigestPass.objects.count() == 2 and Delivery.objects.count() == 2


def test_a_chapter_in_a_series_nobody_follows_is_claimed_and_sends_nothing(alice):
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    ready(*series("Akira", 1))
    assert run_digest_pass().digests == 0
    assert not Delivery.objects.exists() and not Job.objects.exists()


def test_old_claimed_chapters_and_sent_messages_are_pruned(alice):
    chapters = series("Akira", 2)
    follow(alice, chapters[0])
    target = NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    ready(chapters[0])
    run_digest_pass()
    DigestPass.objects.update(started_at=LONG_AGO)
    Delivery.objects.update(sent_at=timezone.now() - timedelta(days=31))
    ready(chapters[1])
    run_digest_pass()
    assert list(ReadyChapter.objects.values_list("chapter_id", flat=True)) == [chapters[1].id]
    assert list(Delivery.objects.filter(target=target).values_list("sent_at", flat=True)) == [None]


def test_the_disk_floor_is_one_condition_while_a_live_worker_reports_it(operator):
    from jobs.models import WorkerStatus

    NotificationTarget.objects.create(user=operator, url="json://127.0.0.1:9/o", scheme="json", health_alerts=True)
    now = timezone.now()
    flags = {"storage_paused": "free disk space 1 GB on /srv is under CRAWLER_MIN_FREE_DISK"}
    for pid in (1, 2):
        WorkerStatus.objects.create(role="crawl", host="h", pid=pid, heartbeat_at=now, flags=flags)
    assert [c.key for c in disk_conditions(now)] == ["disk.floor"]
    assert [c.key for c in check_health(now)] == ["disk.floor"]
    assert check_health(now) == []
    assert Delivery.objects.get().kind == Delivery.Kind.HEALTH
    WorkerStatus.objects.update(flags={})
    assert check_health(now) == [] and not HealthCondition.objects.exists()


def test_a_scheduled_pass_waits_for_the_interval_since_the_last_pass_of_any_worker(alice, settings):
    settings.NOTIFY_DIGEST_INTERVAL = 900
    chapters = series("Akira", 2)
    follow(alice, chapters[0])
    NotificationTarget.objects.create(user=alice, url="json://127.0.0.1:9/a", scheme="json")
    ready(chapters[0])
    assert run_scheduled_pass() is not None  # none ran yet
    ready(chapters[1])
    now = timezone.now()
    assert run_scheduled_pass(now + timedelta(seconds=899)) is None
    later = run_scheduled_pass(now + timedelta(seconds=901))
    assert later is not None and later.chapters == 1


def test_pass_due():
    now = timezone.now()
    assert pass_due(None, timedelta(minutes=15), now)
    assert not pass_due(now - timedelta(minutes=14), timedelta(minutes=15), now)
    assert pass_due(now - timedelta(minutes=15), timedelta(minutes=15), now)


def passes_queries(django_user_model, users: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    chapters = series(f"Series for {users}", 3)
    for i in range(users):
        user = django_user_model.objects.create_user(f"u{users}-{i}", "", "pw")
        follow(user, chapters[0])
        NotificationTarget.objects.create(user=user, url="json://127.0.0.1:9/a", scheme="json")
    ready(*chapters)
    with CaptureQueriesContext(connection) as queries:
        assert run_digest_pass().digests == users
    NotificationTarget.objects.all().delete()
    return len(queries)


def test_a_pass_runs_as_many_queries_for_many_users_as_for_one(django_user_model):
    assert passes_queries(django_user_model, 1) == passes_queries(django_user_model, 6)
