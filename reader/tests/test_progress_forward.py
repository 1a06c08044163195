"""A page fetch moves read progress forward only, in one statement, and concurrent fetches agree on the furthest page.

`reader.progress.record_page_read` is an upsert that applies only while the
stored page is behind: the guard that keeps a preloaded later page when an
earlier one is shown, and the one row per (user, chapter) when several first
fetches race to create it (real processes, each with its own connection).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from reader.models import ReadProgress
from reader.progress import record_page_read
from reader.tests import factories as f

PAGES = 40


@pytest.fixture
def chapter(db):
    source = f.source()
    return f.chapter(f.manga("Forward", src=source), 1, src=source)


def _row(user, chapter) -> tuple[int, bool]:
    row = ReadProgress.objects.get(user=user, chapter=chapter)
    return row.last_page, row.completed


@pytest.mark.sqlite_ok
def test_the_first_read_creates_the_row_at_its_page(alice, chapter):
    record_page_read(user=alice, chapter=chapter, page_number=3, page_count=10)
    assert _row(alice, chapter) == (3, False)


@pytest.mark.sqlite_ok
def test_an_earlier_page_after_a_later_one_changes_nothing(alice, chapter):
    record_page_read(user=alice, chapter=chapter, page_number=7, page_count=10)
    before = ReadProgress.objects.get(user=alice, chapter=chapter).updated_at
    record_page_read(user=alice, chapter=chapter, page_number=3, page_count=10)
    row = ReadProgress.objects.get(user=alice, chapter=chapter)
    assert (row.last_page, row.completed, row.updated_at) == (7, False, before)


@pytest.mark.sqlite_ok
def test_the_last_page_completes_the_chapter_and_completion_stays(alice, chapter):
    record_page_read(user=alice, chapter=chapter, page_number=10, page_count=10)
    assert _row(alice, chapter) == (10, True)
    ReadProgress.objects.filter(user=alice, chapter=chapter).update(last_page=2)  # a client set it back (REST PUT)
    record_page_read(user=alice, chapter=chapter, page_number=4, page_count=10)
    assert _row(alice, chapter) == (4, True)


@pytest.mark.sqlite_ok
def test_a_page_read_is_one_statement(alice, chapter, django_assert_num_queries):
    record_page_read(user=alice, chapter=chapter, page_number=1, page_count=10)
    with django_assert_num_queries(1):
        record_page_read(user=alice, chapter=chapter, page_number=2, page_count=10)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_racing_processes_keep_one_row_at_the_furthest_page(alice, chapter, child_env):
    child = os.path.join(REPO_ROOT, "testsupport", "progress_race_child.py")
    children = [
        subprocess.Popen(
            [sys.executable, child, str(alice.pk), str(chapter.pk), str(PAGES), str(seed)],
            env=child_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in range(4)
    ]
    try:
        for process in children:
            assert process.stdout.readline().strip() == "ready"
        for process in children:  # all at once: the first inserts race each other
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in children:
            assert process.stdout.readline().strip() == "done"
            assert process.wait(timeout=60) == 0
    finally:
        for process in children:
            if process.poll() is None:
                process.kill()
    assert ReadProgress.objects.filter(user=alice, chapter=chapter).count() == 1
    assert _row(alice, chapter) == (PAGES, True)
