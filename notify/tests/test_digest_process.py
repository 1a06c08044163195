"""Digests through a real Apprise `json://` URL: a crawled demo series, `manage.py notify_worker --drain` as a real
process, and a receiver on 127.0.0.1 checking what arrives."""

from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.bookmarks import create_bookmark
from catalog.models import Bookmark, Chapter, Manga
from crawler.passes.metadata_pass import run_metadata_pass
from jobs.models import Job, JobState
from jobs.worker.status.handle import StatusHandle
from notify.models import NotificationTarget, ReadyChapter
from notify.tests.conftest import crawl_content
from notify.tests.receiver import json_receiver

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


def notify_drain(child_env, manage_cmd) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [*manage_cmd, "notify_worker", "--drain"],
        env=dict(
            child_env, JOBS_POLL_SECS="0.2", NOTIFY_PUBLIC_URL="https://manga.example.org", NOTIFY_DIGEST_INTERVAL="1"
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_bookmarked_series_gets_one_digest_per_pass_and_its_first_crawl_is_one_line(
    crawled, alice, child_env, manage_cmd
):
    site, key, source = crawled
    manga = Manga.objects.get()
    create_bookmark(user=alice, manga=manga)
    with json_receiver() as receiver:
        NotificationTarget.objects.create(
            user=alice, url=receiver.apprise_url("digest", "alice:s3cret-pw"), scheme="json", label="webhook"
        )

        # Pass 1: the first crawl's backlog (3 chapters) becomes readable: one line, no chapter list.
        assert crawl_content() == 3
        assert ReadyChapter.objects.count() == 3
        notify_drain(child_env, manage_cmd)
        assert len(receiver.received) == 1
        first = receiver.received[0]
        assert first.path == "/digest"
        assert first.body["title"] == "3 chapters ready to read"
        assert first.body["message"] == (
            r"3 chapters of [Night \<b\>Raid\</b\> \[x\]\(https://evil.example\)]"
            f"(<https://manga.example.org/mangas/{manga.id}/>) are ready"
        )
        assert first.body["type"] == "info"
        assert first.authorization is not None  # the URL's credentials went as HTTP Basic

        # The series' first-crawl day is over and alice has followed it since: a new chapter is news.
        earlier = timezone.now() - timedelta(days=2)
        Manga.objects.filter(id=manga.id).update(created_at=earlier)
        Bookmark.objects.filter(user=alice).update(created_at=earlier)
        site.add_chapter(key)
        run_metadata_pass(source, status=StatusHandle())
        assert crawl_content() == 1
        new = Chapter.objects.get(number=4)

        # Pass 2: one digest listing the new chapter with a link to read it.
        notify_drain(child_env, manage_cmd)
        assert len(receiver.received) == 2
        second = receiver.received[1].body
        assert second["title"] == "1 chapter ready to read"
        label = f"Chapter 4: {new.title}" if new.title else "Chapter 4"
        assert second["message"] == (
            r"**Night \<b\>Raid\</b\> \[x\]\(https://evil.example\)**"
            f"\n- [{label}](<https://manga.example.org/read/{new.id}/>)"
        )
        print("DIGEST BODY (pass 2):", repr(second["message"]))

        # Pass 3: nothing became readable: nothing is sent.
        notify_drain(child_env, manage_cmd)
        assert len(receiver.received) == 2
    assert set(Job.objects.filter(kind="notify_send").values_list("state", flat=True)) == {JobState.DONE}
