"""A worker's status row: written on change (debounced), heartbeated, cleared by the context managers."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest
from django.db.backends.signals import connection_created

from jobs.models import WorkerStatus
from jobs.worker.status.handle import StatusHandle
from jobs.worker.status.phases import fetching_metadata
from jobs.worker.status.publish import StatusPublisher

pytestmark = pytest.mark.django_db(transaction=True)


def row_when(publisher: StatusPublisher, predicate, timeout: float = 5.0) -> WorkerStatus:
    """The row once the publisher thread has written what `predicate` expects."""
    deadline = time.monotonic() + timeout
    while True:
        row = WorkerStatus.objects.get(id=publisher.row_id)
        if predicate(row):
            return row
        assert time.monotonic() < deadline, f"row never matched; last: {row.active_chapters} {row.phase}"
        time.sleep(0.05)


def test_publisher_owns_a_row_naming_this_process():
    status = StatusHandle(worker_count=3)
    with StatusPublisher(status, role="crawl", kinds=["sync_chapter_content"]) as publisher:
        row = WorkerStatus.objects.get(id=publisher.row_id)
        assert (row.role, row.host, row.pid, row.worker_count) == ("crawl", socket.gethostname(), os.getpid(), 3)
        assert row.kinds == ["sync_chapter_content"]
        assert row.stopped_at is None
    row.refresh_from_db()
    assert row.stopped_at is not None


def test_row_shows_active_chapter_with_live_page_count_and_clears_after():
    status = StatusHandle(worker_count=2)
    with StatusPublisher(status, role="crawl", kinds=[], debounce_secs=0.05) as publisher:
        with status.begin_chapter(
            manga_id="m1", manga_title="Moon", chapter_id="c1", chapter_number=3, chapter_label="Side Story 3"
        ):
            for done in range(1, 4):
                status.set_chapter_pages("c1", done, 5)
            row = row_when(publisher, lambda r: r.active_chapters and r.active_chapters[0]["pages_done"] == 3)
            assert row.active_chapters[0] == {
                "manga_id": "m1",
                "manga_title": "Moon",
                "chapter_id": "c1",
                "chapter_number": "3",
                "pages_done": 3,
                "pages_total": 5,
                "chapter_label": "Side Story 3",
            }
        row_when(publisher, lambda r: r.active_chapters == [])


def test_chapter_and_cover_entries_clear_when_the_work_raises():
    status = StatusHandle()
    with StatusPublisher(status, role="crawl", kinds=[], debounce_secs=0.05) as publisher:
        with pytest.raises(RuntimeError):
            with status.begin_cover(manga_id="m1", manga_title="Moon"):
                with status.begin_chapter(manga_id="m1", manga_title="Moon", chapter_id="c1", chapter_number=1):
                    row_when(publisher, lambda r: r.active_chapters and r.current_cover)
                    raise RuntimeError("download blew up")
        row = row_when(publisher, lambda r: r.active_chapters == [] and r.current_cover is None)
        assert row.current_cover is None


def test_phase_and_flags_reach_the_row_and_heartbeat_advances_without_changes():
    status = StatusHandle()
    with StatusPublisher(status, role="crawl", kinds=[], debounce_secs=0.05, heartbeat_secs=0.1) as publisher:
        status.set_phase(fetching_metadata(2, 10, "Moon"))
        status.set_flag("circuit_open_until", "2026-01-01T00:00:00+00:00")
        row = row_when(publisher, lambda r: r.phase.get("state") == "fetching_metadata")
        assert row.phase == {"state": "fetching_metadata", "index": 2, "total": 10, "title": "Moon"}
        assert row.flags["circuit_open_until"] == "2026-01-01T00:00:00+00:00"
        first_beat = row.heartbeat_at
        row_when(publisher, lambda r: r.heartbeat_at > first_beat)


def test_the_publisher_keeps_one_database_session_for_all_its_writes():
    opened: list[str] = []

    def count(sender, connection, **kwargs) -> None:
        opened.append(threading.current_thread().name)

    status = StatusHandle()
    connection_created.connect(count)
    try:
        with StatusPublisher(status, role="crawl", kinds=[], debounce_secs=0.01) as publisher:
            for index in range(1, 6):
                status.set_phase(fetching_metadata(index, 5, "Moon"))
                row_when(publisher, lambda r, index=index: r.phase.get("index") == index)
    finally:
        connection_created.disconnect(count)
    assert opened.count("status-crawl") == 1  # five writes and a heartbeat or two: one session, not one each


def test_extra_flags_are_read_at_each_write():
    state = {"browser": "starting"}
    status = StatusHandle()
    with StatusPublisher(status, role="crawl", kinds=[], extra_flags=lambda: dict(state), debounce_secs=0.05) as p:
        state["browser"] = "running"
        status.poke()
        row_when(p, lambda r: r.flags.get("browser") == "running")


def test_clean_stop_leaves_an_idle_row_with_nothing_active():
    status = StatusHandle()
    publisher = StatusPublisher(status, role="crawl", kinds=[])
    publisher.start()
    with status.begin_chapter(manga_id="m", manga_title="M", chapter_id="c", chapter_number=1):
        status.set_phase(fetching_metadata(1, 2, "M"))
        publisher.stop()
    row = WorkerStatus.objects.get(id=publisher.row_id)
    assert row.stopped_at is not None
    assert row.active_chapters == []
    assert row.phase["state"] == "idle"
