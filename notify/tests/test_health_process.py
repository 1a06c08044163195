"""Operators' source health alerts, once per condition: `manage.py notify_worker --drain` as a real process checks
health at boot; a receiver on 127.0.0.1 counts the alerts that arrive."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from django.utils import timezone

from crawler import state_store
from crawler.payloads import SyncChapterContent
from jobs import queue
from jobs.models import Job, JobState
from notify.models import HealthCondition, NotificationTarget
from notify.tests.receiver import json_receiver

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]


def check(child_env, manage_cmd) -> None:
    done = subprocess.run(
        [*manage_cmd, "notify_worker", "--drain"],
        env=dict(child_env, JOBS_POLL_SECS="0.2", NOTIFY_DEAD_JOBS_MIN="3"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def jobs_of(source_id: str, state: str, n: int) -> list:
    payloads = [
        SyncChapterContent(source_id=source_id, chapter_id=uuid.uuid4(), source_chapter_key=f"k{i}") for i in range(n)
    ]
    ids = [r.id for r in queue.enqueue_many(payloads)]
    Job.objects.filter(id__in=ids).update(state=state, attempts=1, updated_at=timezone.now())
    return ids


def test_health_alerts_fire_once_per_condition_and_again_when_it_returns(operator, alice, child_env, manage_cmd):
    with json_receiver() as receiver:
        NotificationTarget.objects.create(
            user=operator, url=receiver.apprise_url("ops"), scheme="json", digests=False, health_alerts=True
        )
        # A reader who asked for health alerts is not an operator: nothing goes to them.
        NotificationTarget.objects.create(
            user=alice, url=receiver.apprise_url("alice"), scheme="json", digests=False, health_alerts=True
        )
        jobs_of("demo", JobState.DONE, 1)
        dead = jobs_of("demo", JobState.DEAD, 4)
        state_store.set_session_expired("target", True)

        check(child_env, manage_cmd)
        assert [r.path for r in receiver.received] == ["/ops"]
        alert = receiver.received[0].body
        assert alert["type"] == "warning"
        assert alert["title"] == "Mangalord: 2 source problems"
        assert alert["message"] == (
            "- source demo has mostly dead jobs: 4 dead against 1 done recently\n"
            "- source target: its login session expired; its jobs are paused until an operator signs in again"
        )
        assert set(HealthCondition.objects.values_list("key", flat=True)) == {
            "jobs.mostly_dead:demo",
            "session.expired:target",
        }

        # Still true at the next check: no second alert.
        check(child_env, manage_cmd)
        assert len(receiver.received) == 1

        # The dead jobs are requeued and done; the session is renewed: both clear, silently.
        Job.objects.filter(id__in=dead).update(state=JobState.DONE)
        state_store.set_session_expired("target", False)
        check(child_env, manage_cmd)
        assert len(receiver.received) == 1
        assert not HealthCondition.objects.exists()

        # The session expires again: a new alert, for that condition only.
        state_store.set_session_expired("target", True)
        check(child_env, manage_cmd)
        assert len(receiver.received) == 2
        assert receiver.received[1].body["title"] == (
            "Mangalord: source target: its login session expired; its jobs are paused until an operator signs in again"
        )
