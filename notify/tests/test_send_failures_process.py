"""A notification URL that fails: retried with the queue's backoff, then dead-lettered naming its scheme and never its
secret, while the crawl's jobs and chapters are left as they were (`manage.py notify_worker` as a real process)."""

from __future__ import annotations

import subprocess

import pytest
from django.utils import timezone

from catalog.bookmarks import create_bookmark
from catalog.models import Chapter, Manga
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState
from notify.models import Delivery, NotificationTarget
from notify.tests.conftest import crawl_content
from notify.tests.receiver import json_receiver

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]

SECRET = "s3cret-token-9f2"


def run_notify_worker(child_env, manage_cmd) -> None:
    done = subprocess.run(
        [*manage_cmd, "notify_worker", "--drain"],
        env=dict(child_env, JOBS_POLL_SECS="0.2", NOTIFY_SEND_MAX_ATTEMPTS="2"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert SECRET not in done.stdout + done.stderr


def test_a_failing_url_is_retried_then_dead_lettered_by_scheme_and_the_crawl_is_untouched(
    crawled,
    alice,
    child_env,
    manage_cmd,
):
    _, _, source = crawled
    create_bookmark(user=alice, manga=Manga.objects.get())
    crawl_content()
    # Crawl work still queued while notifications fail: the notify worker must neither run nor disturb it.
    crawl_job = queue.enqueue(MetadataPass(source_id=source.id)).id
    with json_receiver() as receiver:
        receiver.fail_with = 500
        NotificationTarget.objects.create(user=alice, url=receiver.apprise_url("hook", f"bot:{SECRET}"), scheme="json")

        run_notify_worker(child_env, manage_cmd)
        send = Job.objects.get(kind="notify_send")
        assert (send.state, send.attempts) == (JobState.PENDING, 1)
        # Retried after the queue's backoff (60 s and jitter for a first failure), not at once.
        assert (send.scheduled_at - timezone.now()).total_seconds() > 30
        assert "json:// target " in send.last_error
        assert "500" in send.last_error
        assert SECRET not in send.last_error

        # The backoff has passed: the last attempt fails too, and the job is dead-lettered.
        Job.objects.filter(id=send.id).update(scheduled_at=timezone.now())
        run_notify_worker(child_env, manage_cmd)
        send.refresh_from_db()
        assert (send.state, send.attempts) == (JobState.DEAD, 2)
        assert "json:// target " in send.last_error
        assert SECRET not in send.last_error and SECRET not in str(send.payload)
        assert receiver.requests == 2
        print("DEAD LETTER:", send.last_error)
    assert Delivery.objects.get().sent_at is None

    crawl = Job.objects.get(id=crawl_job)
    assert (crawl.state, crawl.attempts, crawl.last_error) == (JobState.PENDING, 0, "")
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {Chapter.SyncState.DONE}
