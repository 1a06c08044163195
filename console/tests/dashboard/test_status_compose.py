"""The one-shot status: worker rows, queue counts and durable flags composed in one place."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from console.status.compose import GONE_AFTER, compose_status, most_interesting_phase
from crawler import state_store
from crawler.payloads import MetadataPass, SyncChapterContent
from jobs import kinds, queue
from jobs.counts import queue_counts
from jobs.models import WorkerStatus
from jobs.worker.status.phases import fetching_metadata, idle, reconciling, walking_list

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def worker_row(*, beat_ago: timedelta = timedelta(0), **fields) -> WorkerStatus:
    defaults = {"role": "crawl", "host": "h", "pid": 1, "kinds": [], "worker_count": 2, "phase": idle()}
    return WorkerStatus.objects.create(heartbeat_at=timezone.now() - beat_ago, **{**defaults, **fields})


def chapter(title: str, number: str, done: int) -> dict:
    return {
        "manga_id": str(uuid.uuid4()),
        "manga_title": title,
        "chapter_id": str(uuid.uuid4()),
        "chapter_number": number,
        "pages_done": done,
        "pages_total": 10,
    }


@pytest.mark.parametrize(
    ("phases", "expected_state"),
    [
        ([], "idle"),
        ([idle(), idle()], "idle"),
        ([idle(), walking_list()], "walking_list"),
        ([reconciling(5, 1), walking_list()], "reconciling"),
        ([reconciling(5, 1), fetching_metadata(1, 3, "M"), idle()], "fetching_metadata"),
    ],
)
def test_most_interesting_phase_prefers_the_busiest_work(phases, expected_state):
    assert most_interesting_phase(phases)["state"] == expected_state


def test_most_interesting_idle_phase_is_the_one_firing_soonest():
    soon, later = timezone.now() + timedelta(minutes=5), timezone.now() + timedelta(hours=1)
    assert most_interesting_phase([idle(later), idle(None), idle(soon)]) == idle(soon)


def test_a_worker_with_a_stale_heartbeat_is_shown_as_gone():
    live = worker_row(pid=1, active_chapters=[chapter("A", "1", 2)], phase=walking_list())
    gone = worker_row(pid=2, beat_ago=GONE_AFTER + timedelta(seconds=1), active_chapters=[chapter("B", "1", 5)])

    status = compose_status()
    states = {w["pid"]: w["state"] for w in status["workers"]}
    assert states == {live.pid: "live", gone.pid: "gone"}
    # A gone worker's chapters and phase no longer count as running.
    assert [c["manga_title"] for c in status["active_chapters"]] == ["A"]
    assert status["phase"]["state"] == "walking_list"
    assert status["worker_count"] == 2


def test_the_same_row_goes_stale_as_time_passes():
    worker_row(pid=7)
    assert compose_status()["workers"][0]["state"] == "live"
    later = timezone.now() + GONE_AFTER + timedelta(seconds=1)
    assert compose_status(now=later)["workers"][0]["state"] == "gone"


def test_stopped_workers_are_not_listed():
    worker_row(pid=3, stopped_at=timezone.now())
    assert compose_status()["workers"] == []


def test_active_chapters_and_cover_are_merged_across_live_workers():
    worker_row(pid=1, active_chapters=[chapter("B", "2", 1)], current_cover=None)
    worker_row(
        pid=2,
        active_chapters=[chapter("A", "10", 3), chapter("A", "9", 4)],
        current_cover={"manga_id": "x", "manga_title": "Cover Me"},
        flags={"circuit_open_until": "2030-01-01T00:00:00+00:00", "browser": "running"},
    )
    status = compose_status()
    assert [(c["manga_title"], c["chapter_number"]) for c in status["active_chapters"]] == [
        ("A", "9"),
        ("A", "10"),
        ("B", "2"),
    ]
    assert status["busy"] == 3
    assert status["worker_count"] == 4
    assert status["current_cover"]["manga_title"] == "Cover Me"
    assert status["circuit"] == {"open": True, "open_until": "2030-01-01T00:00:00+00:00"}
    assert status["browser"] == {"h:2": "running"}


def test_status_carries_expired_sessions_and_the_last_pass():
    state_store.set_session_expired("target", True)
    summary = {"at": "2026-01-01T00:00:00+00:00", "discovered": 3, "upserted": 2, "covers_fetched": 1}
    state_store.save_last_pass("demo", summary)
    status = compose_status()
    assert status["session_expired"] == ["target"]
    assert status["last_pass"] == summary


def test_queue_counts_are_one_grouped_query_with_zeros_for_every_kind(django_assert_num_queries):
    queue.enqueue(SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key="a"))
    queue.enqueue(SyncChapterContent(source_id="demo", chapter_id=uuid.uuid4(), source_chapter_key="b"))
    queue.enqueue(MetadataPass(source_id="demo"))
    queue.lease([MetadataPass.kind], 1, timedelta(seconds=30))

    with django_assert_num_queries(1):
        counts = queue_counts()

    assert set(counts) == set(kinds.names())
    assert counts["sync_chapter_content"] == {"pending": 2, "running": 0, "dead": 0}
    assert counts["metadata_pass"] == {"pending": 0, "running": 1, "dead": 0}
    assert counts["analyze_page"] == {"pending": 0, "running": 0, "dead": 0}


def test_compose_uses_counts_passed_in_instead_of_querying_them():
    counts = {"sync_manga": {"pending": 42, "running": 0, "dead": 0}}
    assert compose_status(counts=counts)["queue"] is counts
